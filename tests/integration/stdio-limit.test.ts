/**
 * A stdio message over the transport's limit (10 MiB) is answered with a JSON-RPC error for that request, and the
 * server goes on: the same client's next calls work and the pty session it runs is still there. (The SDK's own
 * transport closed itself on such a message, which shut the server down with its pty and headless sessions.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idOfCutMessage, STDIO_MAX_MESSAGE_BYTES } from "../../src/server/mcp/stdio.js";
import { connect, hasPty, makeWorld, type Mcp, type World } from "../helpers/harness.js";

const pty = await hasPty();

describe.runIf(pty)("a stdio message over the limit", () => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "pty" });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("gets a JSON-RPC error with its id; the server, its pty session and the client's later calls go on", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("a"), backend: "pty" });
    const huge = "x".repeat(STDIO_MAX_MESSAGE_BYTES + 1024);
    const err = await m.client
      .callTool({ name: "send_message", arguments: { session_id: s.session_id, message: huge } }, undefined, { timeout: 60_000 })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: number; message?: string },
      );
    expect(err?.code).toBe(-32600);
    expect(err?.message).toContain(`more than ${STDIO_MAX_MESSAGE_BYTES} bytes`);
    // Twice in a row, then an ordinary call on the same connection.
    const again = await m.client
      .callTool({ name: "list_sessions", arguments: { pad: huge } }, undefined, { timeout: 60_000 })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: number },
      );
    expect(again?.code).toBe(-32600);
    const listed = await m.callOk("list_sessions", {});
    expect(listed.sessions.find((x) => x.session_id === s.session_id)?.status).toBe("ready");
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "still here" });
    expect(r.response).toBe("FAKE REPLY: still here");
    expect(m.stderr()).toMatch(/a stdio message of \d+\+ bytes was dropped/);
  });

  it("the id of a cut message is read from its first or last bytes, never from inside", () => {
    expect(idOfCutMessage('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"xxx', "")).toBe(7);
    expect(idOfCutMessage('{"method":"tools/call","params":{"id":1,"a":"xx', 'xx"},"jsonrpc":"2.0","id":"r-9"}')).toBe("r-9");
    expect(idOfCutMessage('{"method":"x","params":{"a":"xx', 'xx","id":5}}')).toBeUndefined();
    expect(idOfCutMessage("garbage", "garbage")).toBeUndefined();
  });
});

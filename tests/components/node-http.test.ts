/**
 * A node reached over Streamable HTTP (issue 35 item 5), no root needed: the node is the built server's
 * `serve --http` in a world of its own, the coordinator the built server with `{"url", "token_file"}` in nodes.json
 * and a real MCP client. Sessions start, answer and notify through it like through ssh; a token file others can
 * read is refused (the node is unreachable, saying why, and nothing is sent); the node's server stopped and started
 * again on the same port answers again within seconds.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { startHttpServer, type HttpServerProc } from "../helpers/http.js";
import { writeNodesFile } from "../helpers/test-hosts.mjs";

describe.skipIf(!tmuxOrSkip())("a node over HTTP", () => {
  const worlds: World[] = [];
  const servers: HttpServerProc[] = [];
  const clients: Mcp[] = [];
  afterAll(async () => {
    for (const m of clients) await m.close().catch(() => {});
    for (const s of servers) await s.stop().catch(() => {});
    for (const w of worlds) w.cleanup();
  });
  const world = () => {
    const w = makeWorld();
    worlds.push(w);
    return w;
  };
  /** A coordinator whose node "web" is `url`, its token in a file of the given mode. */
  const coordinator = async (url: string, token: string, mode = 0o600) => {
    const w = world();
    const tokenFile = join(w.root, "web.token");
    writeFileSync(tokenFile, `${token}\n`);
    chmodSync(tokenFile, mode);
    w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, { web: { url: `${url}/mcp`, token_file: tokenFile } });
    const m = await connect(w);
    clients.push(m);
    return { w, m };
  };

  it("sessions on the node start, answer, notify and are listed through it; it comes back after its server restarts", async () => {
    const nw = world();
    let node = await startHttpServer(nw);
    servers.push(node);
    const { m } = await coordinator(node.url, node.token);
    const notices: Array<Record<string, unknown>> = [];
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notices.push(n.params.data as Record<string, unknown>),
    );
    const l = await m.callOk("list_sessions", {});
    expect(l.nodes).toEqual([
      expect.objectContaining({ name: "web", status: "reachable", version: expect.stringMatching(/^\d+\.\d+\.\d+/) }),
    ]);
    const s = await m.callOk("start_session", { cwd: nw.work, node: "web" });
    expect(s.node).toBe("web");
    expect((await m.callOk("send_message", { session_id: s.session_id, message: "over http" })).response).toBe(
      "FAKE REPLY: over http",
    );
    // The node's notices come over the server-to-client stream.
    await until(() => notices.some((d) => d.session_id === s.session_id && d.node === "web"), 15_000);
    expect((await m.callOk("list_sessions", { node_filter: "web" })).sessions.map((r) => r.session_id)).toEqual([s.session_id]);

    const port = new URL(node.url).port;
    await node.stop();
    await until(
      async () => (await m.callOk("list_sessions", { node_filter: "web" })).nodes![0]!.status === "unreachable",
      15_000,
      100,
    );
    const down = await m.call("send_message", { session_id: s.session_id, message: "anyone?" });
    expect(down.error?.code, JSON.stringify(down.error)).toBe("NODE_UNREACHABLE");
    node = await startHttpServer(nw, {}, `127.0.0.1:${port}`);
    servers.push(node);
    const t0 = Date.now();
    await until(async () => !(await m.call("send_message", { session_id: s.session_id, message: "back" })).error, 30_000, 100);
    const back = Date.now() - t0;
    console.log(`the node over HTTP answered again ${back} ms after its server was listening`);
    expect(back).toBeLessThan(5000);
    await m.callOk("kill_session", { session_id: s.session_id });
  }, 120_000);

  it("a token file others can read is refused: the node is unreachable, saying why", async () => {
    const nw = world();
    const node = await startHttpServer(nw);
    servers.push(node);
    const { m } = await coordinator(node.url, node.token, 0o644);
    const l = await m.callOk("list_sessions", {});
    expect(l.nodes![0]).toMatchObject({
      name: "web",
      status: "unreachable",
      error: expect.stringContaining("cannot be trusted"),
    });
    expect(l.nodes![0]!.error).not.toContain(node.token);
    expect(m.stderr()).not.toContain(node.token);
    // A wrong token: refused by the node, said as such.
    const bad = await coordinator(node.url, "x".repeat(40));
    const l2 = await bad.m.callOk("list_sessions", {});
    expect(l2.nodes![0]).toMatchObject({ name: "web", status: "unreachable" });
  }, 60_000);
});

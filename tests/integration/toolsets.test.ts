/**
 * Issue 25 over a real MCP client (the SDK's Client over stdio): CLAUDE_SESSIONS_TOOLSETS picks what a server
 * offers; resources and prompts come with core; an unknown toolset stops the server at start.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, type Mcp, type World } from "../helpers/harness.js";

describe("toolsets (issue 25)", () => {
  let w: World;
  let m: Mcp;

  beforeAll(async () => {
    w = makeWorld();
    m = await connect(w, { CLAUDE_SESSIONS_TOOLSETS: "history,admin" });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("lists only the chosen toolsets, without resources and prompts when core is not among them", async () => {
    const { tools } = await m.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "clear_execution_history",
      "configure",
      "get_conversation",
      "get_execution_history",
      "health_check",
      "list_conversations",
      "move_session",
      "search_conversations",
      "transfer_session",
    ]);
    const caps = m.client.getServerCapabilities();
    expect(caps?.tools).toBeDefined();
    expect(caps?.resources).toBeUndefined();
    expect(caps?.prompts).toBeUndefined();
    // The instructions speak only of tools this server has.
    const instructions = m.client.getInstructions() ?? "";
    expect(instructions).toMatch(/search_conversations/);
    expect(instructions).not.toMatch(/start_session|broadcast_message/);
    // Listed alone, a tool describes its own fields (nothing points to a tool the client does not see).
    for (const t of tools) expect(t.description, t.name).not.toMatch(/start_session/);
  });

  it("a tool of another toolset is refused with a typed error naming the variable", async () => {
    const res = await m.call("start_session", { cwd: w.work });
    expect(res.ok).toBe(false);
    expect(res.error?.code).toBe("INVALID_ARGUMENT");
    expect(res.error?.message).toMatch(/CLAUDE_SESSIONS_TOOLSETS/);
  });

  it("an unknown toolset stops the server at start with a clear message", () => {
    const r = spawnSync(process.execPath, [CLI], {
      env: { ...w.env, CLAUDE_SESSIONS_TOOLSETS: "core,teamz" },
      input: "",
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/unknown toolset "teamz"/);
  });
});

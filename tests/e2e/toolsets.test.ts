/**
 * Issue 25 with a real client: the real Claude Code CLI (a headless session, offline against the mock API) loads
 * this package as an MCP server with CLAUDE_SESSIONS_TOOLSETS=core, sends the compact listing to the model as
 * its tools (every core tool; run_task listing only what it adds to start_session's arguments), and a call of one
 * of them comes back as a result, not an error: the CLI's MCP client accepts the compact input and output schemas.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";
import { TOOLSETS } from "../../src/server/toolsets.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude loads the core toolset", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["client"], serverEnv: { CLAUDE_SESSIONS_ALLOW_MCP_SERVERS: "1" } });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("the model gets the core tools only, and a call of list_sessions returns its result", async () => {
    const inner = join(e.world.root, "inner-state");
    mkdirSync(inner, { recursive: true });
    const mcp_servers = {
      cs: { command: process.execPath, args: [CLI], env: { CLAUDE_SESSIONS_DIR: inner, CLAUDE_SESSIONS_TOOLSETS: "core" } },
    };
    const s = await m.call("start_session", {
      cwd: e.dir("client"),
      backend: "headless",
      mcp_servers,
      allowed_tools: ["mcp__cs__list_sessions"],
    });
    // 2.1.197 takes no mcp_servers over stdin (the SDK's initialize delivery; see headless.test.ts): nothing to check there.
    if (s.error?.code === "UNSUPPORTED_OPTION" && /needs Claude Code 2\.1\.330/.test(s.error.message)) return;
    expect(s.ok, s.text).toBe(true);
    // The CLI defers MCP tools: the model sees their names, loads a schema with ToolSearch, then calls the tool.
    e.mock.setNextReply({
      blocks: [{ type: "tool_use", name: "ToolSearch", input: { query: "select:mcp__cs__run_task,mcp__cs__list_sessions" } }],
    });
    e.mock.setNextReply({ blocks: [{ type: "tool_use", name: "mcp__cs__list_sessions", input: {} }] });
    e.mock.setNextReply({ text: "listed" });
    const r = await m.call("send_message", {
      session_id: s.data.session_id as string,
      message: "list the sessions",
      timeout_ms: 60_000,
    });
    expect(r.data, r.text).toMatchObject({ completed: true, response: "listed" });

    const reqs = e.mock.mainRequests();
    const body = JSON.stringify(reqs[0]!.body);
    const offered = [...body.matchAll(/mcp__cs__([a-z_]+)/g)].map((x) => x[1]!);
    expect([...new Set(offered)].sort()).toEqual([...TOOLSETS.core].sort());
    // After ToolSearch the model has run_task's schema as listed: only what it adds to start_session's arguments.
    type Loaded = {
      name: string;
      description?: string;
      input_schema?: { properties?: Record<string, unknown>; required?: string[] };
    };
    const loaded = reqs.flatMap((q) => (q.body?.tools ?? []) as Loaded[]).find((t) => t.name === "mcp__cs__run_task");
    expect(loaded?.input_schema?.properties).not.toHaveProperty("cwd");
    expect(loaded?.input_schema?.required).toEqual(expect.arrayContaining(["cwd", "prompt"]));
    expect(loaded?.input_schema?.properties).toHaveProperty("keep_session");
    expect(loaded?.description).toMatch(/Also every argument of start_session/);

    const answered = reqs.map((q) => q.toolResult).filter((t) => t?.text.includes("total_count"));
    expect(answered).toHaveLength(1);
    expect(answered[0]!.isError).toBe(false);
    await m.callOk("kill_session", { session_id: s.data.session_id as string });
  }, 120_000);
});

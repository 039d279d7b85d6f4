/**
 * The real Claude Code CLI as a team of three (issue #13), offline against the mock API, on tmux: a broadcast reaches
 * the API exactly once per member; wait_for_sessions any/all with one member slow and one at a permission dialog.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tmuxOrSkip, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip() && tmuxOrSkip();

describe.runIf(run)("real claude: a team of three (tmux)", () => {
  let e: E2e;
  let m: Mcp;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["r1", "r2", "r3"] });
    m = await e.connect({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    // In parallel, as a lead would start them (this found that CLAUDE_SESSION_ID must be the Claude session's UUID).
    const started = await Promise.all(
      ["r1", "r2", "r3"].map((d) => m.callOk("start_session", { cwd: e.dir(d), team_name: "crew", permission_mode: "default" })),
    );
    for (const s of started) ids[s.teammate_name!] = s.session_id;
  });
  afterAll(async () => {
    for (const id of Object.values(ids)) await m?.call("kill_session", { session_id: id });
    await m?.close();
    expect(e?.mock.stray ?? []).toEqual([]);
    await e?.cleanup();
  });

  it("broadcast_message reaches the API exactly once per member, with each reply", async () => {
    expect(Object.keys(ids).sort()).toEqual(["member-1", "member-2", "member-3"]);
    const text = "broadcast to the crew";
    const r = await m.callOk("broadcast_message", { team_name: "crew", message: text, timeout_ms: 60_000 }, { timeout: 90_000 });
    expect(r.failed_count, JSON.stringify(r.results)).toBe(0);
    for (const x of r.results) expect(x).toMatchObject({ completed: true, response: `MOCK REPLY: ${text}` });
    expect(e.requestsWith(text)).toHaveLength(3);
  });

  it("wait_for_sessions: any at the first done, all with a slow member and one at a permission dialog", async () => {
    await m.callOk("send_message", {
      team_name: "crew",
      teammate_name: "member-1",
      message: "MOCK_SLOW:4 slow member",
      wait_for_response: false,
    });
    await m.callOk("send_message", {
      team_name: "crew",
      teammate_name: "member-2",
      message: "MOCK_BASH:touch made-by-member-2.txt",
      wait_for_response: false,
    });
    await m.callOk("send_message", {
      team_name: "crew",
      teammate_name: "member-3",
      message: "quick one",
      wait_for_response: false,
    });
    const any = await m.callOk("wait_for_sessions", { team_name: "crew", mode: "any", timeout_ms: 30_000 }, { timeout: 60_000 });
    expect(any.done).toBe(true);
    expect(any.sessions.find((s) => s.teammate_name === "member-1")?.done).toBe(false);
    const all = await m.callOk("wait_for_sessions", { team_name: "crew", mode: "all", timeout_ms: 60_000 }, { timeout: 90_000 });
    expect(all.done).toBe(true);
    const by = Object.fromEntries(all.sessions.map((s) => [s.teammate_name, s]));
    expect(by["member-1"]).toMatchObject({
      done: true,
      final_state: "idle",
      last_response: "MOCK REPLY: MOCK_SLOW:4 slow member",
    });
    expect(by["member-2"]).toMatchObject({
      done: true,
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash" },
    });
    expect(by["member-3"]).toMatchObject({ done: true, final_state: "idle", last_response: "MOCK REPLY: quick one" });
    await m.callOk("respond_permission", { team_name: "crew", teammate_name: "member-2", decision: "deny" });
  });
});

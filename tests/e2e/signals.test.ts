/**
 * The real CLI's newer hook signals (issue #20), offline against the mock API (tmux):
 * - Stop's background_tasks: an Agent tool call with run_in_background leaves the agent running at Stop; the CLI
 *   runs a turn of its own (a <task-notification> prompt) when it ends. check_idle waits for that turn.
 * - auto mode with a command outside the cwd: 2.1.330 and later show the "can't check" screen and, ~6.5 s later,
 *   a Notification `agent_needs_input` (list_sessions and waits say `needs_input`); 2.1.197 denies the call and
 *   fires PermissionDenied (the turn result lists it in `permission_denials`).
 * Run on each CLI with CLAUDE_PATH (payloads: tests/fixtures/screens/hook-signals.json).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareVersions } from "../../src/claude/versions.js";
import { until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, realClaudeVersion, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: background tasks, needs-input notices, auto mode's denials", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["bg", "auto"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("check_idle waits for a background agent: through the CLI's own task-notification turn, to a Stop with none left", async () => {
    const s = await m.call("start_session", { cwd: e.dir("bg"), permission_mode: "default" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    // The agent's own request waits 4 s at the mock (MOCK_SLOW), so it is still running when the turn stops.
    e.mock.setNextReply((req) => {
      const tools = ((req.body?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
      const name = tools.includes("Agent") ? "Agent" : "Task";
      return {
        blocks: [
          { type: "text", text: "starting a background agent" },
          {
            type: "tool_use",
            name,
            input: {
              description: "bg job",
              prompt: "MOCK_SLOW:4 background work",
              subagent_type: "general-purpose",
              run_in_background: true,
            },
          },
        ],
      };
    });
    const r = await m.call("send_message", { session_id: id, message: "start a background agent", timeout_ms: 30_000 });
    expect(r.data, r.text).toMatchObject({
      completed: true,
      final_state: "idle",
      response: "MOCK: tool done",
      background_tasks: 1,
    });
    // While the agent works the wait does not end: a short one times out (without check_idle it ends at once).
    const plain = await m.call("wait_for_completion", { session_id: id, timeout_ms: 1000 });
    expect(plain.data, plain.text).toMatchObject({ completed: true, timed_out: false });
    const early = await m.call("wait_for_completion", { session_id: id, check_idle: true, timeout_ms: 1000 });
    expect(early.data, early.text).toMatchObject({ completed: false, timed_out: true });
    const w = await m.call("wait_for_completion", { session_id: id, check_idle: true, timeout_ms: 30_000 });
    expect(w.data, w.text).toMatchObject({ completed: true, final_state: "idle", timed_out: false });
    expect(w.data.background_tasks).toBeUndefined();
    // The last turn is the CLI's own, started by the agent's end.
    expect(String(w.data.last_response)).toMatch(/^MOCK REPLY:/);
    const ev = e.events(id);
    expect(ev.filter((x) => x.hook_event_name === "UserPromptSubmit").map((x) => String(x.prompt).slice(0, 19))).toEqual([
      "start a background ",
      "<task-notification>",
    ]);
    await m.call("kill_session", { session_id: id });
  });

  it("auto mode, a command outside the cwd: agent_needs_input (2.1.330+) or PermissionDenied (2.1.197) reaches the caller", async () => {
    const outside = join(e.world.root, "outside-auto");
    mkdirSync(outside, { recursive: true });
    const target = join(outside, "made.txt");
    const s = await m.call("start_session", { cwd: e.dir("auto"), permission_mode: "auto" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const version = realClaudeVersion()!;
    if (compareVersions(version, "2.1.330") >= 0) {
      // The "can't check" screen: no hook at first; Claude Code's own notice ~6.5 s later.
      await m.call("send_message", { session_id: id, message: `MOCK_BASH:touch ${target}`, timeout_ms: 2000 });
      let row: Record<string, unknown> | undefined;
      await until(
        async () => {
          const l = await m.call("list_sessions", {});
          row = l.data.sessions.find((x) => x.session_id === id);
          return row?.needs_input !== undefined;
        },
        25_000,
        250,
      );
      expect(row?.needs_input).toBe("Auto mode can't check actions in this session and needs your choice");
      const w = await m.call("wait_for_completion", { session_id: id, timeout_ms: 500 });
      expect(w.data.needs_input).toBe("Auto mode can't check actions in this session and needs your choice");
      expect(e.events(id).some((x) => x.hook_event_name === "Notification" && x.notification_type === "agent_needs_input")).toBe(
        true,
      );
    } else {
      const r = await m.call("send_message", { session_id: id, message: `MOCK_BASH:touch ${target}`, timeout_ms: 30_000 });
      expect(r.data, r.text).toMatchObject({ completed: true, final_state: "idle", response: "MOCK: tool failed" });
      expect(r.data.permission_denials).toEqual([
        {
          tool_name: "Bash",
          tool_use_id: expect.any(String),
          tool_input: { command: `touch ${target}`, description: "mock command" },
          reason: expect.stringMatching(/^Auto mode could not evaluate this action/),
        },
      ]);
    }
    expect(existsSync(target)).toBe(false);
    await m.call("kill_session", { session_id: id, force: true });
  });
});

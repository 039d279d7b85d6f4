/** Issue #23: cs:hibernated in the fold — every server replays the same hibernated session, and only a kill ends it. */
import { describe, expect, it } from "vitest";
import { foldAll, type LogEvent } from "../../src/events/reducer.js";
import { canMove, inService, isLive, statusGroup } from "../../src/core/status.js";

const ev = (hook_event_name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({
  hook_event_name,
  ...extra,
});
const turn = [
  ev("cs:spawn", { claude_session_id: "c1", generation: 1 }),
  ev("SessionStart", { source: "startup" }),
  ev("UserPromptSubmit", { prompt: "hi" }),
  ev("Stop", { last_assistant_message: "hello" }),
];

describe("hibernated in the fold", () => {
  it("cs:hibernated makes an idle session hibernated; its process's late end and exit change nothing", () => {
    const f = foldAll([
      ...turn,
      ev("cs:hibernated", { generation: 1 }),
      ev("SessionEnd", { reason: "other" }),
      ev("cs:exit", { exit_code: 0, generation: 1 }),
    ]);
    expect(f).toMatchObject({ status: "hibernated", turn_count: 1, last_response: "hello", claude_session_id: "c1" });
    expect(isLive(f.status)).toBe(false);
    expect(statusGroup(f.status)).toBe("inactive");
    expect(inService(f.status)).toBe(true);
  });

  it("a kill (cs:exit reason kill) ends a hibernated session; a wake's cs:spawn starts it again with its counts", () => {
    expect(
      foldAll([...turn, ev("cs:hibernated", { generation: 1 }), ev("cs:exit", { reason: "kill", generation: 1 })]).status,
    ).toBe("dead");
    const woke = foldAll([
      ...turn,
      ev("cs:hibernated", { generation: 1 }),
      ev("cs:spawn", { claude_session_id: "c1", generation: 2 }),
      ev("SessionStart", { source: "resume" }),
    ]);
    expect(woke).toMatchObject({ status: "ready", turn_count: 1, prompts_submitted: 1, generation: 2 });
  });

  it("a cs:hibernated of an older process, or during a start, is ignored; a failed wake (error) goes back to hibernated", () => {
    const started = [...turn, ev("cs:spawn", { generation: 2 }), ev("SessionStart", { source: "resume" })];
    expect(foldAll([...started, ev("cs:hibernated", { generation: 1 })]).status).toBe("ready");
    expect(foldAll([...turn, ev("cs:spawn", { generation: 2 }), ev("cs:hibernated", { generation: 2 })]).status).toBe("starting");
    expect(
      foldAll([
        ...turn,
        ev("cs:spawn", { generation: 2 }),
        ev("cs:start_failed", { message: "x" }),
        ev("cs:hibernated", { generation: 2 }),
      ]).status,
    ).toBe("hibernated");
  });

  it("the transition table: live statuses may hibernate; hibernated goes only to starting, error or dead", () => {
    for (const s of ["ready", "idle", "busy", "waiting_for_permission", "blocked"] as const)
      expect(canMove(s, "hibernated")).toBe(true);
    expect(canMove("hibernated", "starting")).toBe(true);
    expect(canMove("hibernated", "idle")).toBe(false);
  });
});

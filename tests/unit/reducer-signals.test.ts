/**
 * The newer hook signals (issue #20), folded from payloads captured from the real CLIs
 * (tests/fixtures/screens/hook-signals.json): Notification agent_needs_input, PermissionDenied, Stop's
 * background_tasks and the CLI's own turn when they end. None is required: an older CLI without them folds as before.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { foldAll, reduce, type LogEvent } from "../../src/events/reducer.js";

const SIGNALS = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "fixtures", "screens", "hook-signals.json"), "utf8"),
) as Record<string, LogEvent>;
const real = (prefix: string): LogEvent => {
  const k = Object.keys(SIGNALS).find((x) => x.startsWith(prefix));
  if (!k) throw new Error(`no fixture ${prefix}`);
  return SIGNALS[k]!;
};
const ev = (hook_event_name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({
  hook_event_name,
  ...extra,
});
const busy = () =>
  foldAll([ev("cs:spawn"), ev("SessionStart"), ev("UserPromptSubmit", { prompt: "x" }), ev("PreToolUse", { tool_name: "Bash" })]);

describe("reducer: the CLI's newer signals", () => {
  it("agent_needs_input (2.1.330/2.1.331, auto mode's 'can't check' screen) is kept while it stands, and the next progress clears it", () => {
    for (const k of ["Notification@2.1.331", "Notification@2.1.330"]) {
      let f = reduce(busy(), { ...real(k), ts: "2026-11-25T00:00:07.000Z" });
      expect(f.status).toBe("busy");
      expect(f.needs_input).toEqual({
        message: "Auto mode can't check actions in this session and needs your choice",
        since: "2026-11-25T00:00:07.000Z",
      });
      f = reduce(f, ev("cs:interrupted"));
      expect(f.needs_input).toBeUndefined();
      expect(reduce(reduce(busy(), real(k)), ev("PostToolUse")).needs_input).toBeUndefined();
    }
    // Other notifications (permission_prompt, idle_prompt) are not "needs input" notices; nor is one after the end.
    expect(
      reduce(busy(), ev("Notification", { notification_type: "permission_prompt", message: "Claude needs your permission" }))
        .needs_input,
    ).toBeUndefined();
    expect(
      reduce(foldAll([ev("cs:spawn"), ev("cs:exit", { exit_code: 0 })]), real("Notification@2.1.331")).needs_input,
    ).toBeUndefined();
  });

  it("PermissionDenied (2.1.197, auto mode) is listed for the turn, which goes on; the next prompt starts a new list", () => {
    let f = reduce(busy(), real("PermissionDenied@2.1.197"));
    expect(f.status).toBe("busy");
    expect(f.permission_denials).toEqual([
      {
        tool_name: "Bash",
        tool_use_id: "toolu_mock_cdb4e54fbb38d01dbeaf7a87",
        tool_input: { command: "touch /home/user/tmp/outside-auto.txt", description: "mock command" },
        reason: "Auto mode could not evaluate this action and is blocking it for safety — run with --debug for details",
      },
    ]);
    f = reduce(f, real("Stop@2.1.197 (the same"));
    expect(f).toMatchObject({ status: "idle", turn_count: 1, last_response: "MOCK: tool failed" });
    expect(f.permission_denials).toHaveLength(1);
    expect(reduce(f, ev("UserPromptSubmit", { prompt: "next" })).permission_denials).toBeUndefined();
  });

  it("Stop's background_tasks (2.1.197 and 2.1.331) count the agents still running; the CLI's own task-notification turn ends with none", () => {
    expect(reduce(busy(), real("Stop@2.1.197 (background")).background_tasks).toBe(1);
    let f = reduce(busy(), real("Stop@2.1.331 (an Agent"));
    expect(f).toMatchObject({ status: "idle", turn_count: 1, prompts_submitted: 1, background_tasks: 1 });
    f = reduce(f, real("UserPromptSubmit@2.1.331"));
    // Busy again with a turn the caller never sent: a check_idle wait goes on (turns.ts).
    expect(f).toMatchObject({ status: "busy", turn_count: 1, prompts_submitted: 2 });
    f = reduce(f, real("Stop@2.1.331 (the end"));
    expect(f).toMatchObject({ status: "idle", turn_count: 2, prompts_submitted: 2, background_tasks: 0 });
    // A CLI whose Stop has no background_tasks: none.
    expect(reduce(busy(), ev("Stop", { last_assistant_message: "ok" })).background_tasks).toBe(0);
  });
});

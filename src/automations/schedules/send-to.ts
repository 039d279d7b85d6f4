/**
 * A schedule that sends to a named long-lived session (issue 37): each run is send_message with the schedule's
 * prompt, waiting for the reply, instead of a run_task that starts a session. What it keeps is the address, the
 * prompt, the wait and whether a busy session queues it (overlap: queue) or the run is skipped (overlap: skip).
 * run_task's options describe a session to start, so with send_to they are refused rather than ignored.
 */
import { scheduleTaskInput, type ScheduleTaskInput } from "../../api/schedules.js";
import { SessionError } from "../../core/errors.js";

/** The longest wait send_message takes. */
const SEND_MAX_MS = 3_600_000;
/** Fields that mean the same with send_to; every other run_task option must keep its default. */
const KEPT = new Set([
  "name",
  "cron",
  "at",
  "every",
  "overlap",
  "catch_up",
  "idempotency_key",
  "send_to",
  "prompt",
  "timeout_ms",
]);
const DEFAULTS: Record<string, unknown> = scheduleTaskInput.parse({ name: "x", every: "1h", prompt: "" });

/** The stored task of a send_to schedule; an INVALID_ARGUMENT when a run_task option is given with it. */
export function sendToTask(args: ScheduleTaskInput): Record<string, unknown> {
  const extra = Object.entries(args).filter(
    ([k, v]) => !KEPT.has(k) && v !== undefined && JSON.stringify(v) !== JSON.stringify(DEFAULTS[k]),
  );
  if (extra.length) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `send_to sends to a session that exists: ${extra.map(([k]) => k).join(", ")} cannot be given with it`,
      {
        suggestion: "Leave out the options of a new session (cwd, model, …), or leave out send_to to start a run_task each time.",
      },
    );
  }
  return {
    send_to: args.send_to,
    prompt: args.prompt,
    timeout_ms: Math.min(args.timeout_ms, SEND_MAX_MS),
    queue: args.overlap === "queue",
  };
}

/** send_message's arguments for one run of a send_to schedule. */
export function sendArgs(task: Record<string, unknown>): Record<string, unknown> {
  return {
    ...(task.send_to as object),
    message: task.prompt,
    wait_for_response: true,
    wait_for_usage: true,
    timeout_ms: task.timeout_ms,
    queue: task.queue === true,
  };
}

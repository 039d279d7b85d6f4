/** Schemas of the schedule tools (issue 37): a named run_task that starts itself on a cron, at a time, or every so often. */
import { z } from "zod";
import { sessionId, teamName, teammateName } from "./common.js";
import { runTaskInput } from "./run-task.js";

export const scheduleName = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    "a schedule's name is letters, digits, '.', '_' and '-', starting with a letter or digit",
  );

const overlap = z.enum(["skip", "queue"]);
const catchUp = z.enum(["skip", "once"]);

/** A long-lived session a schedule sends its prompt to (send_message) instead of starting a run_task. */
export const sendTo = z.union([
  z.strictObject({ session_id: sessionId }),
  z.strictObject({ team_name: teamName, teammate_name: teammateName }),
]);

// A run always waits for its turn's usage (its record carries the cost): run_task's wait_for_usage is not a choice here.
export const scheduleTaskInput = runTaskInput
  .omit({ wait_for_usage: true })
  .extend({
    name: scheduleName,
    cwd: runTaskInput.shape.cwd.optional().describe("Needed unless send_to."),
    send_to: sendTo.optional().describe("Send prompt to this session (send_message) instead of run_task."),
    cron: z.string().min(1).max(200).optional().describe("5 or 6 fields, server's local time."),
    at: z.string().max(64).optional().describe("ISO time, once."),
    every: z
      .string()
      .regex(/^\d{1,6}(ms|s|m|h|d)$/, 'every is a number and a unit: "30s", "5m", "1h", "1d"')
      .optional()
      .describe('"30s", "5m", "1h".'),
    overlap: overlap.default("skip").describe("Due while a run (or send_to's session) is busy: skip it, or queue one."),
    catch_up: catchUp.default("once").describe("Due while no server ran: once, or skip."),
  })
  .strict();

export const scheduleRun = z.object({
  due_at: z.string(),
  started_at: z.string().optional(),
  ended_at: z.string().optional(),
  outcome: z.enum(["running", "completed", "failed", "interrupted", "error", "skipped"]),
  reason: z.string().optional(),
  session_id: z.string().optional(),
  cost_usd: z.number().optional(),
  duration_ms: z.number().optional(),
  error_code: z.string().optional(),
});

export const scheduleView = z.object({
  name: z.string(),
  cron: z.string().optional(),
  at: z.string().optional(),
  every: z.string().optional(),
  cwd: z.string().optional().describe("Absent for send_to."),
  send_to: sendTo.optional(),
  overlap,
  catch_up: catchUp,
  paused: z.boolean(),
  created_at: z.string(),
  next_at: z.string().nullable().describe("null: an `at` schedule that ran, or paused."),
  running: z.boolean(),
  queued: z.boolean(),
  runs: z.array(scheduleRun).describe("The last runs, newest last."),
});

export const scheduleTaskOutput = z.object({ schedule: scheduleView });

export const listSchedulesInput = z.strictObject({ name: scheduleName.optional() });
export const listSchedulesOutput = z.object({ schedules: z.array(scheduleView) });

export const changeScheduleInput = z.strictObject({ name: scheduleName, action: z.enum(["pause", "resume", "delete"]) });
export const changeScheduleOutput = z.object({
  name: z.string(),
  action: z.string(),
  schedule: scheduleView.optional().describe("Absent once deleted."),
});

export type ScheduleTaskInput = z.infer<typeof scheduleTaskInput>;
export type ScheduleView = z.infer<typeof scheduleView>;
export type ScheduleRun = z.infer<typeof scheduleRun>;

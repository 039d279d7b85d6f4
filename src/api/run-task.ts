/** Schemas of run_task: start a session, run one prompt, return its result (the one-call "do this" tool). */
import { z } from "zod";
import { backend, nodeField, status, timeoutMs, turnFields } from "./common.js";
import { startInput } from "./sessions.js";

export const runTaskInput = startInput
  .extend({
    prompt: z.string(),
    backend: backend.optional().describe("Default: headless."),
    timeout_ms: timeoutMs(600_000, 24 * 3_600_000).describe("ms to wait; the turn runs on after."),
    keep_session: z.boolean().default(true).describe("false: end it after the turn."),
    wait_for_usage: z.boolean().default(false).describe("Also wait for the turn's usage and cost (else usage_pending)."),
  })
  .strict();

export const runTaskOutput = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  backend,
  status: status.describe("The session's status when the call returned."),
  kept: z
    .boolean()
    .describe(
      "keep_session: the session stays for more prompts; false: it is being ended (in the background, after the reply; resumable).",
    ),
  response: z.string().optional(),
  usage_pending: z
    .boolean()
    .optional()
    .describe(
      "true: the reply came at the turn's end, before its usage line; usage, cost and totals follow in a `usage` notification.",
    ),
  ...turnFields,
  ...nodeField,
});

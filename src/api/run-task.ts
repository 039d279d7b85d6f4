/** Schemas of run_task: start a session, run one prompt, return its result (the one-call "do this" tool). */
import { z } from "zod";
import { backend, nodeField, status, timeoutMs, turnFields } from "./common.js";
import { startInput } from "./sessions.js";

export const runTaskInput = startInput
  .extend({
    prompt: z.string().describe("The task: the first prompt."),
    backend: backend.optional().describe("Default: headless when available."),
    timeout_ms: timeoutMs(600_000, 24 * 3_600_000).describe("Wait for the turn this long (ms); it runs on after."),
    keep_session: z.boolean().default(true).describe("false: end the session after the turn (resumable)."),
  })
  .strict();

export const runTaskOutput = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  backend,
  status: status.describe("The session's status when the call returned."),
  kept: z.boolean().describe("keep_session: the session stays for more prompts; false: it is being ended (in the background, after the reply; resumable)."),
  response: z.string().optional(),
  ...turnFields,
  ...nodeField,
});

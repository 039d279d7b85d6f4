/** Schemas of run_task: start a session, run one prompt, return its result (the one-call "do this" tool). */
import { z } from "zod";
import { backend, nodeField, status, timeoutMs, turnFields } from "./common.js";
import { startInput } from "./sessions.js";

export const runTaskInput = startInput
  .extend({
    prompt: z.string().describe("The task: the session's first prompt (the same rules as send_message's message)."),
    backend: backend.optional().describe("Where it runs (default: headless when this server has it)."),
    timeout_ms: timeoutMs(600_000, 24 * 3_600_000).describe("How long to wait for the first turn (default 600000); the turn keeps running after a time-out."),
    keep_session: z.boolean().default(true).describe("Keep the session for send_message / resume_session; false ends it once the turn is over (its record stays, resumable)."),
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

import { z } from "zod";
import { defineTool } from "../tool.js";
import { sessionId, timeoutMs, turnFields } from "./common.js";

export const sendMessage = defineTool({
  name: "send_message",
  title: "Send a prompt to a session",
  description:
    "Types a prompt into the session (bracketed paste, then Enter), confirms Claude accepted it, and by default waits for the reply. " +
    "A busy session gives SESSION_BUSY unless queue is true.",
  input: z
    .object({
      session_id: sessionId,
      message: z
        .string()
        .describe(
          "The prompt (at most 100,000 characters), delivered exactly as text. Control characters other than newline and tab are refused, " +
            "and so is a leading \"!\" (Claude Code's bash mode) or \"#\": put a space before it to send it as text.",
        ),
      wait_for_response: z.boolean().default(true),
      timeout_ms: timeoutMs(30_000),
      queue: z.boolean().default(false).describe("If the session is busy, queue the prompt (Claude runs it after the current turn)."),
      bash_mode: z
        .boolean()
        .default(false)
        .describe("Run message as a shell command through Claude Code's bash mode (message without the \"!\"). Only when the server runs with CLAUDE_SESSIONS_ALLOW_BASH_MODE=1; otherwise PERMISSION_DENIED."),
    })
    .strict(),
  output: z.looseObject({
    session_id: z.string(),
    message_sent: z.boolean(),
    response: z.string().optional(),
    sent_at: z.string(),
    responded_at: z.string().optional(),
    final_state: z.string(),
    queued: z.boolean().optional(),
    ...Object.fromEntries(Object.entries(turnFields).map(([k, v]) => [k, v.optional()])),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (orch, args, ctx) => orch.send(args, ctx) as never,
});

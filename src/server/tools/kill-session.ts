import { z } from "zod";
import { defineTool } from "../tool.js";
import { sessionId } from "./common.js";

export const killSession = defineTool({
  name: "kill_session",
  title: "Kill a Claude Code session",
  description:
    "Ends a session: SIGTERM to its process group, a grace period, then SIGKILL (at once with force). The record stays (status dead, resumable) unless save_state is false.",
  input: z
    .object({
      session_id: sessionId,
      force: z.boolean().default(false),
      save_state: z.boolean().default(true).describe("Keep the record so resume_session can bring the conversation back."),
    })
    .strict(),
  output: z.looseObject({
    session_id: z.string(),
    status: z.enum(["killed", "not_found", "already_dead"]),
    exit_code: z.number().optional(),
    state_saved: z.boolean(),
    killed_at: z.string(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: (orch, args) => orch.kill(args) as never,
});

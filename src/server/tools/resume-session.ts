import { z } from "zod";
import { defineTool } from "../tool.js";
import { backend, doppler, env, sessionId } from "./common.js";
import { startOutput } from "./start-session.js";

export const resumeSession = defineTool({
  name: "resume_session",
  title: "Resume a Claude Code session",
  description:
    "Brings an ended session back in a fresh terminal with `claude --resume`, keeping its conversation (fork: true gives it a new Claude session id and leaves the old conversation untouched). " +
    "Also adopts any Claude Code conversation given its claude_session_id and cwd.",
  input: z
    .object({
      session_id: sessionId.optional(),
      claude_session_id: z.string().max(64).optional().describe("Adopt a conversation this server never started (needs cwd)."),
      cwd: z.string().min(1).max(4096).optional().describe("Working directory (default: the session's own)."),
      message: z.string().optional().describe("A prompt to deliver once the session is ready."),
      fork: z.boolean().optional(),
      backend: backend.optional(),
      env: env.optional(),
      doppler: doppler.optional(),
      trust_workspace: z.boolean().optional(),
    })
    .strict(),
  output: startOutput.extend({ resumed_at: z.string(), forked: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (orch, args, ctx) => orch.resume(args, ctx) as never,
});

import { compactInput, compactOutput, resetInput, resetOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const resetSession = defineTool({
  name: "reset_session",
  title: "Start a fresh conversation in a session",
  description: "Clears an idle session's conversation (Claude Code's /clear): same session, cwd and options; the old conversation stays resumable (old_claude_session_id).",
  input: resetInput,
  output: resetOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  handler: (svc, args, ctx) => svc.reset(args, ctx),
});

export const compactSession = defineTool({
  name: "compact_session",
  title: "Compact a session's conversation",
  description: "Summarises an idle session's conversation to free context (Claude Code's /compact, with optional instructions).",
  input: compactInput,
  output: compactOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.compact(args, ctx),
});

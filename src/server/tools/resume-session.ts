import { resumeInput, resumeOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const resumeSession = defineTool({
  name: "resume_session",
  title: "Resume a Claude Code session",
  description: "Brings an ended session back with its conversation (claude --resume); options given replace the stored ones. fork: a new session from any session's conversation. Adopts any conversation given claude_session_id and cwd.",
  input: resumeInput,
  output: resumeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.resume(args, ctx),
});

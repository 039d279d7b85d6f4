import { resumeInput, resumeOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const resumeSession = defineTool({
  name: "resume_session",
  title: "Resume a Claude Code session",
  description:
    "Brings an ended session back in a fresh terminal with `claude --resume`, keeping its conversation (fork: true gives it a new Claude session id and leaves the old conversation untouched). " +
    "Also adopts any Claude Code conversation given its claude_session_id and cwd.",
  input: resumeInput,
  output: resumeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.resume(args, ctx),
});

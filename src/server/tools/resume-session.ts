import { resumeInput, resumeOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const resumeSession = defineTool({
  name: "resume_session",
  title: "Resume a Claude Code session",
  description: "An ended session, with its conversation (fork: as a new one).",
  input: resumeInput,
  output: resumeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.resume(args, ctx),
});

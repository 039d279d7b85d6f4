import { resumeInput, resumeOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const resumeSession = defineTool({
  name: "resume_session",
  title: "Resume a session",
  description: "Given options replace stored ones; fork: new session.",
  input: resumeInput,
  output: resumeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "core",
  route: "adopt",
  handler: (svc, args, ctx) => svc.resume(args, ctx),
});

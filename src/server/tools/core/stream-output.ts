import { streamInput, streamOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const streamOutputTool = defineTool({
  name: "stream_output",
  title: "Read a session's output",
  description: "Pass cursor back for what's new.",
  input: streamInput,
  output: streamOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "core",
  route: "session",
  handler: (svc, args, ctx) => svc.stream(args, ctx),
});

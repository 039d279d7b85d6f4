import { streamInput, streamOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const streamOutputTool = defineTool({
  name: "stream_output",
  title: "Read a session's output",
  description: "A session's output: screen (the terminal now), log (raw output) or transcript (the conversation) since a cursor. Pass the cursor back for what is new; follow waits for it.",
  input: streamInput,
  output: streamOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (svc, args, ctx) => svc.stream(args, ctx),
});

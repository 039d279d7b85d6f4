import { streamInput, streamOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const streamOutputTool = defineTool({
  name: "stream_output",
  title: "Read a session's output",
  description:
    "mode screen: the visible terminal. mode log: the raw terminal output (ANSI stripped) since a cursor. mode transcript: the conversation " +
    "from Claude's transcript since a cursor. Pass back the returned cursor to get only what is new; with follow, waits for new output.",
  input: streamInput,
  output: streamOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (svc, args, ctx) => svc.stream(args, ctx),
});

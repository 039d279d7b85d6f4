import { interruptInput, interruptOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const interruptSession = defineTool({
  name: "interrupt_session",
  title: "Interrupt a session's turn",
  description: "Presses Esc to stop the session's running turn and confirms it on the screen.",
  input: interruptInput,
  output: interruptOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (svc, args, ctx) => svc.interrupt(args, ctx),
});

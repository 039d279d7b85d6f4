import { interruptInput, interruptOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const interruptSession = defineTool({
  name: "interrupt_session",
  title: "Interrupt a turn",
  description: "Esc; confirms the turn stopped.",
  input: interruptInput,
  output: interruptOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "core",
  route: "session",
  handler: (svc, args, ctx) => svc.interrupt(args, ctx),
});

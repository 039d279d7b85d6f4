import { startInput, startOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const startSession = defineTool({
  name: "start_session",
  title: "Start a session",
  description: "Returns once ready; a login, trust or API-key screen fails it.",
  input: startInput,
  output: startOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "core",
  route: "placed",
  handler: (svc, args, ctx) => svc.start(args, ctx),
});

import { respondInput, respondOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const respondPermission = defineTool({
  name: "respond_permission",
  title: "Answer a permission prompt",
  description: "Confirms it took effect.",
  input: respondInput,
  output: respondOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "core",
  route: "session",
  handler: (svc, args, ctx) => svc.respondPermission(args, ctx),
});

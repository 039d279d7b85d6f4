import { respondInput, respondOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const respondPermission = defineTool({
  name: "respond_permission",
  title: "Answer a permission prompt",
  description: "Answers the permission dialog a session shows (allow once, allow always, or deny) and confirms the answer took effect.",
  input: respondInput,
  output: respondOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.respondPermission(args, ctx),
});

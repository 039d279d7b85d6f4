import { z } from "zod";
import { defineTool } from "../tool.js";
import { sessionId } from "./common.js";

export const respondPermission = defineTool({
  name: "respond_permission",
  title: "Answer a permission prompt",
  description: "Answers the permission dialog a session shows (allow once, allow always, or deny) and confirms the answer took effect.",
  input: z.object({ session_id: sessionId, decision: z.enum(["allow", "allow_always", "deny"]) }).strict(),
  output: z.looseObject({ session_id: z.string(), answered: z.boolean(), decision: z.string(), tool_name: z.string(), status: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (orch, args, ctx) => orch.respondPermission(args, ctx) as never,
});

import { listInput, listOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const listSessions = defineTool({
  name: "list_sessions",
  title: "List sessions",
  description: "Status, backend, any pending prompt.",
  input: listInput,
  output: listOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "core",
  route: "listing",
  handler: (svc, args) => svc.list(args),
});

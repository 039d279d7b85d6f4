import { listInput, listOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const listSessions = defineTool({
  name: "list_sessions",
  title: "List Claude Code sessions",
  description:
    "Lists sessions with their status (checked against tmux in one call), backend, and any pending permission prompt. A pure read: " +
    "a session whose terminal is gone is shown dead here and recorded so in the background.",
  input: listInput,
  output: listOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (svc, args) => svc.list(args),
});

import { syncInput, syncOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const syncContextTool = defineTool({
  name: "sync_context",
  title: "Tell a session what changed",
  description:
    "Sends a running session (or every live member of team_name) what changed in its working directory since its last sync: git branch, " +
    "status and diff stat; changed files as @path mentions; the names (never the values) of variables changed in its .env files. " +
    "When nothing changed it sends nothing unless force.",
  input: syncInput,
  output: syncOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.syncContext(args, ctx),
});

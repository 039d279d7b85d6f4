import { syncInput, syncOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const syncContextTool = defineTool({
  name: "sync_context",
  title: "Tell a session what changed",
  description:
    "Tells a session (or a team) what changed in its working directory since its last sync: git status, diff stat, " +
    "changed files, changed .env names. Nothing changed: sends nothing unless force.",
  input: syncInput,
  output: syncOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "teams",
  route: "group",
  handler: (svc, args, ctx) => svc.syncContext(args, ctx),
});

import { mergeInput, mergeOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const mergeWorktreeTool = defineTool({
  name: "merge_worktree",
  title: "Merge a session's worktree into a branch",
  description:
    "Commits the session's changes on its branch and merges it into target through the merge queue; a conflict or a failed check changes nothing.",
  toolset: "teams",
  route: "session",
  input: mergeInput,
  output: mergeOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: (svc, args, ctx) => svc.mergeWorktree(args, ctx),
});

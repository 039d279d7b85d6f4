import { fanOutInput, fanOutOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const fanOutTool = defineTool({
  name: "fan_out",
  title: "One prompt to several sessions, checked and ranked",
  description:
    "Runs prompt in n sessions, each in its own worktree from the repo's clean HEAD; runs the operator's checks in each; returns them ranked.",
  toolset: "teams",
  route: "local",
  input: fanOutInput,
  output: fanOutOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.fanOut(args, ctx),
});

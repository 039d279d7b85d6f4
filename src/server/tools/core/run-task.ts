import { runTaskInput, runTaskOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const runTask = defineTool({
  name: "run_task",
  title: "Run one task in a new session",
  description: "Returns the turn's result.",
  input: runTaskInput,
  output: runTaskOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "core",
  route: "placed",
  handler: async (svc, args, ctx) => failIfTurnFailed("run_task", await svc.runTask(args, ctx)),
});

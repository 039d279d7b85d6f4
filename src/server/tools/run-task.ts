import { runTaskInput, runTaskOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const runTask = defineTool({
  name: "run_task",
  title: "Run one task in a new session",
  description: "Starts a session (headless by default), runs prompt as its first turn and returns the turn's result; continue with send_message. Takes start_session's options. Cancelling interrupts the turn.",
  input: runTaskInput,
  output: runTaskOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (svc, args, ctx) => failIfTurnFailed("run_task", await svc.runTask(args, ctx)),
});

import { runTaskInput, runTaskOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const runTask = defineTool({
  name: "run_task",
  title: "Run one task in a new session",
  description:
    "Starts a session (headless unless backend says otherwise), runs prompt as its first turn and returns that turn's result " +
    "(response, usage, cost, and for headless the SDK's figures), with session_id and claude_session_id to continue with send_message or resume_session. " +
    "Reports progress while it runs; cancelling the call interrupts the turn. keep_session: false ends the session afterwards (its record stays, resumable).",
  input: runTaskInput,
  output: runTaskOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (svc, args, ctx) => failIfTurnFailed("run_task", await svc.runTask(args, ctx)),
});

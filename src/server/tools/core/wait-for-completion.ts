import { waitInput, waitOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const waitForCompletion = defineTool({
  name: "wait_for_completion",
  title: "Wait for a turn to end",
  description: "Until the turn ends, needs an answer or the CLI exits.",
  input: waitInput,
  output: waitOutput,
  // Not read-only: it may record an interrupt and clear the input box (see the description).
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "core",
  route: "session",
  handler: async (svc, args, ctx) => failIfTurnFailed("wait_for_completion", await svc.wait(args, ctx)),
});

import { waitInput, waitOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const waitForCompletion = defineTool({
  name: "wait_for_completion",
  title: "Wait for a session's turn to end",
  description:
    "Waits until the session's current turn ends, a permission prompt opens, or the process exits. Wakes on hook events (no polling), " +
    "sends progress notifications while waiting, and stops when the request is cancelled. When a turn was stopped with Esc by a person " +
    "in an attached pane (no hook fires), it records that turn as interrupted and clears the prompt Claude put back into the input box.",
  input: waitInput,
  output: waitOutput,
  // Not read-only: it may record an interrupt and clear the input box (see the description).
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: async (svc, args, ctx) => failIfTurnFailed("wait_for_completion", await svc.wait(args, ctx)),
});

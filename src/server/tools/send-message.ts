import { sendInput, sendOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const sendMessage = defineTool({
  name: "send_message",
  title: "Send a prompt to a session",
  description: "Types a prompt into a session and by default waits for the reply. A busy session gives SESSION_BUSY unless queue. The text is delivered exactly, or refused.",
  input: sendInput,
  output: sendOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (svc, args, ctx) => failIfTurnFailed("send_message", await svc.send(args, ctx)),
});

import { sendInput, sendOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";
import { failIfTurnFailed } from "./turn-failure.js";

export const sendMessage = defineTool({
  name: "send_message",
  title: "Send a prompt",
  description: "Exact text; waits for the reply.",
  input: sendInput,
  output: sendOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "core",
  route: "wake",
  handler: async (svc, args, ctx) => failIfTurnFailed("send_message", await svc.send(args, ctx)),
});

import { answerPromptInput, answerPromptOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const answerPrompt = defineTool({
  name: "answer_prompt",
  title: "Answer a blocking screen",
  description: "Picks one of blocked.choices.",
  input: answerPromptInput,
  output: answerPromptOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "core",
  route: "session",
  handler: (svc, args, ctx) => svc.answerPrompt(args, ctx),
});

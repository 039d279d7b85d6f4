import { answerPromptInput, answerPromptOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const answerPrompt = defineTool({
  name: "answer_prompt",
  title: "Answer a screen that blocks a session",
  description: "Answers a screen that blocks a session (status blocked: plan approval, MCP server, trust, usage limit, unknown): picks one of blocked.choices by label or number. Permission prompts: respond_permission.",
  input: answerPromptInput,
  output: answerPromptOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.answerPrompt(args, ctx),
});

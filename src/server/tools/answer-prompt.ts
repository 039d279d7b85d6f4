import { answerPromptInput, answerPromptOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const answerPrompt = defineTool({
  name: "answer_prompt",
  title: "Answer a screen that blocks a session",
  description:
    "Answers a screen of Claude Code that waits for an answer (status blocked: auto mode's \"can't check\" screen, plan approval, " +
    "MCP server approval, trust, usage limit, or a screen the server does not know): picks one of `blocked.choices` by label or number, " +
    "presses that row's keys as the server reads them from the screen, and confirms the screen went. Permission requests use respond_permission.",
  input: answerPromptInput,
  output: answerPromptOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.answerPrompt(args, ctx),
});

import { startInput, startOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const startSession = defineTool({
  name: "start_session",
  title: "Start a Claude Code session",
  description:
    "Starts an interactive Claude Code session in a tmux pane (or a PTY), or a headless one (backend headless: the CLI through the Agent SDK, no terminal), and returns once it is ready (its SessionStart hook fired). " +
    "Fails with a clear reason, including the screen, when Claude Code shows a login, trust or API-key screen or exits.",
  input: startInput,
  output: startOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.start(args, ctx),
});

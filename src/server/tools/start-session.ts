import { startInput, startOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const startSession = defineTool({
  name: "start_session",
  title: "Start a Claude Code session",
  description: "Starts a Claude Code session (tmux, pty or headless) and returns when it is ready. Fails with the screen when a login, trust or API-key screen stops it. Details: README.",
  input: startInput,
  output: startOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.start(args, ctx),
});

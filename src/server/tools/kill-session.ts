import { killInput, killOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const killSession = defineTool({
  name: "kill_session",
  title: "Kill a Claude Code session",
  description: "Ends a session (SIGTERM, a grace period, SIGKILL; at once with force). Its record stays, resumable, unless save_state is false.",
  input: killInput,
  output: killOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: (svc, args) => svc.kill(args),
});

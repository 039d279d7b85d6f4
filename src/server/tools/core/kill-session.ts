import { killInput, killOutput } from "../../../api/index.js";
import { defineTool } from "../../tool.js";

export const killSession = defineTool({
  name: "kill_session",
  title: "Kill a session",
  description: "SIGTERM, then SIGKILL (force: at once).",
  input: killInput,
  output: killOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  toolset: "core",
  route: "session",
  handler: (svc, args) => svc.kill(args),
});

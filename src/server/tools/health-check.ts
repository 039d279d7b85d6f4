import { healthInput, healthOutput } from "../../api/index.js";
import { healthChecks } from "../health.js";
import { serverInfo } from "../info.js";
import { defineTool } from "../tool.js";

export const healthCheck = defineTool({
  name: "health_check",
  title: "Check the server's health",
  description:
    "Checks tmux, the claude CLI, the state directory and lock, doppler, session limits, the team members' socket and " +
    "uptime. status down: no session can start; degraded: something is missing.",
  input: healthInput,
  output: healthOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "admin",
  route: "health",
  handler: (svc) =>
    healthChecks({
      cfg: svc.deps.cfg,
      store: svc.deps.store,
      version: serverInfo.version,
      startedAt: serverInfo.startedAt,
      armedLimits: svc.armedLimits,
      runners: Object.values(svc.deps.runners),
      ...(svc.deps.history ? { index: () => svc.history.index.state() } : {}),
      extra: [...serverInfo.checks].map((f) => f()),
      ...(serverInfo.memberSocket ? { memberSocket: serverInfo.memberSocket } : {}),
    }),
});

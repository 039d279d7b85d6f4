/**
 * What a serving process (stdio or HTTP) starts besides its transport: webhooks out and schedules (issue 37). A
 * schedule's run is run_task through server/call.ts as `schedule:<name>`: the same validation, gates and audit
 * line as a client's call.
 */
import type { App } from "../app.js";
import { startAutomations, type Automations } from "../automations/start.js";
import { callTool } from "../server/call.js";
import { serverInfo } from "../server/info.js";
import { runTask } from "../server/tools/core/run-task.js";

export function startServerAutomations(app: App): Automations {
  const a = startAutomations(app.sessions, {
    run: (name, task) => callTool(app.sessions, runTask, task, { actor: `schedule:${name}` }),
  });
  for (const c of a.checks) serverInfo.checks.add(c);
  const close = a.close.bind(a);
  a.close = async () => {
    for (const c of a.checks) serverInfo.checks.delete(c);
    await close();
  };
  return a;
}

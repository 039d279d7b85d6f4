/**
 * What a serving process (stdio or HTTP) starts besides its transport: webhooks out and schedules (issue 37). A
 * schedule's run is run_task (or send_message, for send_to) through server/call.ts as `schedule:<name>`: the same
 * validation, gates and audit line as a client's call.
 */
import type { App } from "../app.js";
import { startAutomations, type Automations } from "../automations/start.js";
import { callTool } from "../server/call.js";
import { serverInfo } from "../server/info.js";
import { runTask } from "../server/tools/core/run-task.js";
import { sendMessage } from "../server/tools/core/send-message.js";
import { sendArgs } from "../automations/schedules/send-to.js";

export function startServerAutomations(app: App): Automations {
  const a = startAutomations(app.sessions, {
    // send_to: send_message to that session (its budget and every gate, as of now); else run_task.
    run: (name, task) =>
      task.send_to !== undefined
        ? callTool(app.sessions, sendMessage, sendArgs(task), { actor: `schedule:${name}` })
        : // A run's record carries its cost: the result waits for the turn's usage (issue 38 returns it sooner otherwise).
          callTool(app.sessions, runTask, { ...task, wait_for_usage: true }, { actor: `schedule:${name}` }),
  });
  for (const c of a.checks) serverInfo.checks.add(c);
  const close = a.close.bind(a);
  a.close = async () => {
    for (const c of a.checks) serverInfo.checks.delete(c);
    await close();
  };
  return a;
}

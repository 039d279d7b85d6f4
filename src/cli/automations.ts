/**
 * What a serving process (stdio or HTTP) starts besides its transport: webhooks out and schedules (issue 37).
 */
import type { App } from "../app.js";
import { startAutomations, type Automations } from "../automations/start.js";

export function startServerAutomations(app: App): Automations {
  return startAutomations(app.sessions);
}

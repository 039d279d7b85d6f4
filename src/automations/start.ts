/**
 * The server's automations (issue 37): webhooks out and, when given a way to run a task, schedules. Started by a
 * serving process only (stdio or HTTP), never by a one-shot CLI command. A bad webhooks file throws here, so the
 * server does not start with endpoints it would silently ignore.
 */
import type { SessionService } from "../sessions/service.js";
import { loadWebhooks } from "./webhooks/config.js";
import { Webhooks } from "./webhooks/delivery.js";
import { publishSessionEvents } from "./webhooks/publish.js";

export interface Automations {
  webhooks: Webhooks;
  /** The webhooks file, when one is configured. */
  webhooksFile?: string;
  close(): Promise<void>;
}

export function startAutomations(svc: SessionService, env: NodeJS.ProcessEnv = process.env): Automations {
  const cfg = loadWebhooks(env);
  const webhooks = new Webhooks(cfg.endpoints, svc.deps.cfg.stateDir, svc.deps.log);
  const off = cfg.endpoints.length ? publishSessionEvents(svc, webhooks) : () => {};
  if (cfg.endpoints.length) svc.deps.log.info(`webhooks: ${cfg.endpoints.length} endpoint(s) from ${cfg.file}`);
  return {
    webhooks,
    ...(cfg.file ? { webhooksFile: cfg.file } : {}),
    async close() {
      off();
      await webhooks.close();
    },
  };
}

/**
 * The server's automations (issue 37): webhooks out and schedules. Started by a serving process only (stdio or
 * HTTP), never by a one-shot CLI command. A bad webhooks file throws here, so the server does not start with
 * endpoints it would silently ignore. `run` is how a schedule runs its task: the serving command gives run_task
 * through server/call.ts (validation, every gate, the audit line as `schedule:<name>`).
 */
import type { HealthCheck } from "../api/index.js";
import type { SessionService } from "../sessions/service.js";
import { servingChecks } from "./health.js";
import { Scheduler, type RunResult } from "./schedules/scheduler.js";
import { ScheduleStore } from "./schedules/store.js";
import { loadWebhooks } from "./webhooks/config.js";
import { Webhooks } from "./webhooks/delivery.js";
import { publishSessionEvents } from "./webhooks/publish.js";

export interface Automations {
  webhooks: Webhooks;
  scheduler: Scheduler;
  /** health_check's checks of this server's automations. */
  checks: Array<() => HealthCheck>;
  close(): Promise<void>;
}

export interface AutomationOptions {
  env?: NodeJS.ProcessEnv;
  run(name: string, task: Record<string, unknown>): Promise<RunResult>;
}

export function startAutomations(svc: SessionService, o: AutomationOptions): Automations {
  const env = o.env ?? process.env;
  const tickMs = svc.deps.cfg.scheduleTickMs;
  const cfg = loadWebhooks(svc.deps.cfg.webhooksFile, env);
  const { stateDir } = svc.deps.cfg;
  const log = svc.deps.log;
  const webhooks = new Webhooks(cfg.endpoints, stateDir, log);
  const off = cfg.endpoints.length ? publishSessionEvents(svc, webhooks) : () => {};
  if (cfg.endpoints.length) log.info(`webhooks: ${cfg.endpoints.length} endpoint(s) from ${cfg.file}`);
  const scheduler = new Scheduler({
    store: new ScheduleStore(stateDir, log),
    log,
    tickMs,
    run: o.run,
    onFinished: (name, run) => {
      const { reason, ...rest } = run;
      webhooks.publish({
        event: "schedule.finished",
        fields: { schedule: name, ...rest },
        ...(reason ? { text: { reason } } : {}),
      });
    },
  });
  scheduler.start();
  return {
    webhooks,
    scheduler,
    checks: servingChecks(scheduler, tickMs, cfg.endpoints.length, () => webhooks.dead),
    async close() {
      off();
      await scheduler.stop();
      await webhooks.close();
    },
  };
}

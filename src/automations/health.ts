/**
 * Whether schedules and webhooks would fire (health_check in a server, doctor outside one): schedules need a server
 * running them (its scheduler's heartbeat), webhooks a readable endpoints file; deliveries in the dead letter are
 * said with the command that replays them.
 */
import type { HealthCheck } from "../api/index.js";
import type { Logger } from "../util/log.js";
import { schedulesServed, type Scheduler } from "./schedules/scheduler.js";
import { ScheduleStore } from "./schedules/store.js";
import { loadWebhooks } from "./webhooks/config.js";
import { readDeadLetters } from "./webhooks/dead-letter.js";

/** The checks of a process that does not run the automations itself (doctor). */
export async function automationChecks(stateDir: string, webhooksFile: string | undefined, log: Logger): Promise<HealthCheck[]> {
  const out: HealthCheck[] = [];
  const store = new ScheduleStore(stateDir, log);
  try {
    const f = await store.read();
    const active = Object.values(f.schedules).filter((s) => !s.paused && s.next_at !== null).length;
    const served = await schedulesServed(store);
    if (!active)
      out.push({ name: "schedules", status: "ok", detail: `${Object.keys(f.schedules).length} schedule(s), none active` });
    else
      out.push({
        name: "schedules",
        status: served ? "ok" : "degraded",
        detail: served
          ? `${active} active; a server runs them`
          : `${active} active schedule(s) would not fire: no server runs them (claude-sessions serve --http, or service install)`,
      });
  } catch (e) {
    out.push({ name: "schedules", status: "degraded", detail: e instanceof Error ? e.message : String(e) });
  }
  out.push(await webhookCheck(stateDir, webhooksFile));
  return out;
}

async function webhookCheck(stateDir: string, webhooksFile: string | undefined, endpoints?: number): Promise<HealthCheck> {
  let n = endpoints;
  if (n === undefined) {
    try {
      n = loadWebhooks(webhooksFile).endpoints.length;
    } catch (e) {
      return { name: "webhooks", status: "down", detail: `would not fire: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  const dead = (await readDeadLetters(stateDir)).length;
  if (!n)
    return {
      name: "webhooks",
      status: "ok",
      detail: `none configured (CLAUDE_SESSIONS_WEBHOOKS)${dead ? `; ${dead} in the dead letter` : ""}`,
    };
  return {
    name: "webhooks",
    status: dead ? "degraded" : "ok",
    detail: `${n} endpoint(s)${dead ? `; ${dead} deliver${dead === 1 ? "y" : "ies"} in the dead letter (claude-sessions webhooks replay --all)` : ""}`,
  };
}

/** The checks of the serving process (synchronous: health_check's extra checks), from what it last saw. */
export function servingChecks(
  scheduler: Scheduler,
  tickMs: number,
  endpoints: number,
  deadSinceStart: () => number,
): Array<() => HealthCheck> {
  return [
    () => {
      if (!scheduler.lastTickAt && !scheduler.lastError)
        return { name: "schedules", status: "ok", detail: "the first look is under way" };
      const age = Date.now() - scheduler.lastTickAt;
      if (scheduler.lastError || age > Math.max(10 * tickMs, 30_000))
        return {
          name: "schedules",
          status: "degraded",
          detail:
            `would not fire: the scheduler last looked ${Math.round(age / 1000)} s ago` +
            (scheduler.lastError ? ` (${scheduler.lastError.slice(0, 200)})` : ""),
        };
      return { name: "schedules", status: "ok", detail: `${scheduler.active} active; looked ${Math.round(age / 1000)} s ago` };
    },
    () => {
      const dead = deadSinceStart();
      return {
        name: "webhooks",
        status: dead ? "degraded" : "ok",
        detail:
          `${endpoints} endpoint(s)` +
          (dead
            ? `; ${dead} deliver${dead === 1 ? "y" : "ies"} went to the dead letter since start (claude-sessions webhooks)`
            : ""),
      };
    },
  ];
}

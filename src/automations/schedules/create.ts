/**
 * What the schedule tools do to the schedules file: make one (bad input is a typed error and nothing is stored),
 * list, pause, resume, delete.
 */
import type { ScheduleTaskInput, ScheduleView } from "../../api/schedules.js";
import { SessionError } from "../../core/errors.js";
import { nextFrom } from "./scheduler.js";
import { sendToTask } from "./send-to.js";
import { viewOf, type ScheduleRecord, type ScheduleStore } from "./store.js";
import { checkTiming, nextAfter } from "./timing.js";

const NOT_TASK = new Set(["name", "cron", "at", "every", "overlap", "catch_up", "idempotency_key"]);
/** How many schedules one state directory holds. */
export const MAX_SCHEDULES = 200;

function notFound(name: string): SessionError {
  return new SessionError("INVALID_ARGUMENT", `no schedule named ${JSON.stringify(name)}`, {
    suggestion: "list_schedules names them.",
  });
}

export async function createSchedule(store: ScheduleStore, args: ScheduleTaskInput, now = Date.now()): Promise<ScheduleView> {
  const timing = {
    ...(args.cron !== undefined ? { cron: args.cron } : {}),
    ...(args.at !== undefined ? { at: args.at } : {}),
    ...(args.every !== undefined ? { every: args.every } : {}),
  };
  checkTiming(timing, now);
  // What a schedule keeps is written to the state directory and runs again and again: no secrets, no fixed id.
  if (args.env !== undefined)
    throw new SessionError("INVALID_ARGUMENT", "a schedule does not keep env (its values may be secrets and would be stored)", {
      suggestion: "Give the variables to the server's environment, or use doppler.",
    });
  if (args.session_id !== undefined)
    throw new SessionError("INVALID_ARGUMENT", "a schedule starts a new session each run: session_id cannot be given", {
      suggestion: "Leave session_id out, or give send_to {session_id} to send each run to that session.",
    });
  if (args.send_to === undefined && args.cwd === undefined)
    throw new SessionError(
      "INVALID_ARGUMENT",
      "a schedule needs cwd (where its run_task starts), or send_to (a session to send to)",
      { suggestion: "Give cwd, or send_to {session_id} / {team_name, teammate_name}." },
    );
  const task =
    args.send_to !== undefined ? sendToTask(args) : Object.fromEntries(Object.entries(args).filter(([k]) => !NOT_TASK.has(k)));
  const first = nextAfter(timing, now);
  return store.update((f) => {
    if (Object.hasOwn(f.schedules, args.name))
      throw new SessionError("ALREADY_EXISTS", `a schedule named ${JSON.stringify(args.name)} exists`, {
        suggestion: "Choose another name, or delete the schedule first (change_schedule action delete).",
      });
    if (Object.keys(f.schedules).length >= MAX_SCHEDULES)
      throw new SessionError("LIMIT_REACHED", `this server holds ${MAX_SCHEDULES} schedules, the most it keeps`, {
        suggestion: "Delete schedules you no longer need.",
      });
    const s: ScheduleRecord = {
      name: args.name,
      ...timing,
      overlap: args.overlap,
      catch_up: args.catch_up,
      paused: false,
      created_at: new Date(now).toISOString(),
      next_at: first,
      task,
      runs: [],
    };
    f.schedules[args.name] = s;
    return viewOf(s);
  });
}

export async function listSchedules(store: ScheduleStore, name?: string): Promise<ScheduleView[]> {
  const f = await store.read();
  if (name !== undefined && !Object.hasOwn(f.schedules, name)) throw notFound(name);
  return Object.values(f.schedules)
    .filter((s) => name === undefined || s.name === name)
    .map(viewOf);
}

export async function changeSchedule(
  store: ScheduleStore,
  name: string,
  action: "pause" | "resume" | "delete",
  now = Date.now(),
): Promise<ScheduleView | undefined> {
  return store.update((f) => {
    const s = f.schedules[name];
    if (!s || !Object.hasOwn(f.schedules, name)) throw notFound(name);
    if (action === "delete") {
      delete f.schedules[name];
      return undefined;
    }
    if (action === "pause") s.paused = true;
    else if (s.paused) {
      s.paused = false;
      // Times that passed while paused are not caught up: the next one from now.
      if (s.next_at !== null && s.next_at <= now) s.next_at = nextFrom(s, s.next_at, now);
    }
    return viewOf(s);
  });
}

/**
 * Fires due schedules. Every tick reads the schedules under the lock and, for each one due, decides there (so of two
 * servers on one state directory only the one that advances `next_at` runs it): a run still going → skipped, or
 * queued when the schedule says so; missed while no server ran (found by a server's first tick) → run once, or
 * skipped, per `catch_up`; else run. Several due times missed count as one. A run goes through `run` (the serving
 * command gives run_task through server/call.ts, actor `schedule:<name>`: every gate a direct call obeys, as of now),
 * and its outcome, cost and duration are written back to the schedule's runs.
 */
import { readFile, stat, unlink } from "node:fs/promises";
import type { ScheduleRun } from "../../api/schedules.js";
import { toSessionError } from "../../core/errors.js";
import { processStart, sameProcessAlive } from "../../store/lock.js";
import { writeFileWhole } from "../../util/fs/atomic.js";
import type { Logger } from "../../util/log.js";
import { RunClaims } from "./claims.js";
import { RUNS_KEPT, type ScheduleRecord, type ScheduleStore } from "./store.js";
import { everyMs, nextAfter } from "./timing.js";

/** A server that runs schedules says so this often (`<state>/schedules.alive`); older than this, none does. */
export const HEARTBEAT_MS = 60_000;

/** Whether `<state>/schedules.alive` says a live server runs the schedules. */
export async function schedulesServed(store: ScheduleStore): Promise<boolean> {
  try {
    const [text, st] = await Promise.all([readFile(aliveFile(store), "utf8"), stat(aliveFile(store))]);
    const b = JSON.parse(text) as { pid: number; start: string };
    return Date.now() - st.mtimeMs < HEARTBEAT_MS && sameProcessAlive(b.pid, b.start);
  } catch {
    return false;
  }
}

export function aliveFile(store: ScheduleStore): string {
  return `${store.file.replace(/\.json$/, "")}.alive`;
}

export interface RunResult {
  session_id?: string;
  completed?: boolean;
  turn_outcome?: string;
  cost_usd?: number | null;
  error?: string;
}

export interface SchedulerOptions {
  store: ScheduleStore;
  log: Logger;
  /** Runs one schedule's task as `schedule:<name>`; throws a SessionError when the call is refused or fails. */
  run(name: string, task: Record<string, unknown>): Promise<RunResult>;
  /** A run ended (or was skipped): schedule.finished. */
  onFinished?(name: string, run: ScheduleRun): void;
  now?: () => number;
  tickMs?: number;
}

/** The first due time after `due` that is later than `now` (several missed ones collapse into this one). */
export function nextFrom(s: ScheduleRecord, due: number, now: number): number | null {
  if (s.every !== undefined) {
    const iv = everyMs(s.every);
    return due + (Math.floor((now - due) / iv) + 1) * iv;
  }
  return nextAfter(s, Math.max(due, now));
}

function pushRun(s: ScheduleRecord, r: ScheduleRun): void {
  s.runs.push(r);
  if (s.runs.length > RUNS_KEPT) s.runs.splice(0, s.runs.length - RUNS_KEPT);
}

export class Scheduler {
  private readonly now: () => number;
  private readonly tickMs: number;
  private timer: NodeJS.Timeout | undefined;
  private first = true;
  private ticking: Promise<void> | undefined;
  private readonly runs = new Set<Promise<void>>();
  private readonly me = { pid: process.pid, start: processStart(process.pid) };
  private stopped = false;
  /** When the last tick ended (health_check: a scheduler that stopped ticking would not fire). */
  lastTickAt = 0;
  lastError: string | undefined;
  /** Schedules not paused with a time to come, as of the last tick. */
  active = 0;
  private lastBeat = 0;

  private readonly claims: RunClaims;

  constructor(private readonly o: SchedulerOptions) {
    this.now = o.now ?? Date.now;
    this.tickMs = o.tickMs ?? 1_000;
    this.claims = new RunClaims(`${o.store.file.replace(/\.json$/, "")}.claims`);
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.ticking = this.tick()
        .catch((e: unknown) => {
          this.lastError = String(e);
          this.o.log.warn(`schedules: ${String(e)}`);
        })
        .finally(() => {
          if (!this.stopped) {
            this.timer = setTimeout(loop, this.tickMs);
            this.timer.unref();
          }
        });
    };
    loop();
  }

  /** Looks at every schedule once and starts the runs that are due. */
  async tick(): Promise<void> {
    const now = this.now();
    const first = this.first;
    this.first = false;
    const toRun: Array<{ name: string; task: Record<string, unknown>; run: ScheduleRun }> = [];
    const finished: Array<{ name: string; run: ScheduleRun }> = [];
    // Most ticks find nothing to do: a read without the lock, and no write.
    const seen = await this.o.store.read();
    this.active = Object.values(seen.schedules).filter((s) => !s.paused && s.next_at !== null).length;
    const work = Object.values(seen.schedules).some(
      (s) =>
        (!s.paused && s.next_at !== null && s.next_at <= now) ||
        (s.queued && !s.running) ||
        (s.running && !sameProcessAlive(s.running.pid, s.running.start)),
    );
    if (work)
      await this.o.store.update((f) => {
        for (const s of Object.values(f.schedules)) {
          // A run whose server is gone is not going on any more.
          if (s.running && !sameProcessAlive(s.running.pid, s.running.start)) {
            const r = s.runs.findLast((x) => x.outcome === "running");
            if (r)
              Object.assign(r, {
                outcome: "error",
                reason: "its server ended before the run did",
                ended_at: new Date(now).toISOString(),
              });
            delete s.running;
          }
          if (s.paused || s.next_at === null || s.next_at > now) continue;
          const due = s.next_at;
          s.next_at = nextFrom(s, due, now);
          const dueAt = new Date(due).toISOString();
          const missed = first && now - due > this.tickMs;
          if (missed && s.catch_up === "skip") {
            const r: ScheduleRun = { due_at: dueAt, outcome: "skipped", reason: "due while no server ran (catch_up: skip)" };
            pushRun(s, r);
            finished.push({ name: s.name, run: r });
            continue;
          }
          if (s.running) {
            if (s.overlap === "queue") s.queued = true;
            else {
              const r: ScheduleRun = {
                due_at: dueAt,
                outcome: "skipped",
                reason: "the previous run was still going (overlap: skip)",
              };
              pushRun(s, r);
              finished.push({ name: s.name, run: r });
            }
            continue;
          }
          toRun.push({ name: s.name, task: s.task, run: this.begin(s, due, now) });
        }
        // A queued run starts once the one before it ended.
        for (const s of Object.values(f.schedules)) {
          if (s.paused || s.running || !s.queued) continue;
          s.queued = false;
          toRun.push({ name: s.name, task: s.task, run: this.begin(s, now, now) });
        }
      });
    this.lastTickAt = this.now();
    this.lastError = undefined;
    // What doctor reads to tell whether a server runs the schedules (a write every 15 s, not every tick).
    if (this.active && Date.now() - this.lastBeat > HEARTBEAT_MS / 4) {
      this.lastBeat = Date.now();
      await writeFileWhole(aliveFile(this.o.store), JSON.stringify({ ...this.me, at: new Date().toISOString() }), 0o600).catch(
        () => {},
      );
    }
    for (const { run } of finished) this.o.log.info(`schedule: a run skipped (${run.reason})`);
    for (const x of finished) this.o.onFinished?.(x.name, x.run);
    const mine = await Promise.all(toRun.map((x) => this.claimed(x.name, x.run)));
    toRun.forEach((x, i) => {
      const p = (mine[i] ? this.execute(x.name, x.task, x.run) : this.lost(x.name, x.run))
        .catch((e: unknown) => this.o.log.warn(`schedule ${x.name}: ${String(e)}`))
        .finally(() => this.runs.delete(p));
      this.runs.add(p);
    });
  }

  /** A queued run's due time is when it was let go, so it has a claim of its own too. */
  private claimed(name: string, run: ScheduleRun): Promise<boolean> {
    return this.claims.claim(name, Date.parse(run.due_at)).catch((e: unknown) => {
      // The claims folder is not writable: the lock's claim stands alone (logged), rather than no run at all.
      this.o.log.warn(`schedule ${name}: claim not written (${String(e)}); running on the lock's claim`);
      return true;
    });
  }

  /** Another server claimed this due time first: the run this tick wrote is taken back. */
  private async lost(name: string, run: ScheduleRun): Promise<void> {
    await this.o.store.update((f) => {
      const s = f.schedules[name];
      if (!s) return;
      s.runs = s.runs.filter((r) => !(r.outcome === "running" && r.started_at === run.started_at && r.due_at === run.due_at));
      if (s.running?.pid === this.me.pid) delete s.running;
    });
  }

  private begin(s: ScheduleRecord, due: number, now: number): ScheduleRun {
    s.running = { ...this.me, due, since: now };
    const r: ScheduleRun = { due_at: new Date(due).toISOString(), started_at: new Date(now).toISOString(), outcome: "running" };
    pushRun(s, r);
    return r;
  }

  private async execute(name: string, task: Record<string, unknown>, run: ScheduleRun): Promise<void> {
    const t0 = Date.now();
    let done: Partial<ScheduleRun>;
    try {
      const res = await this.o.run(name, task);
      done = {
        outcome: res.completed
          ? res.turn_outcome === "interrupted"
            ? "interrupted"
            : res.turn_outcome === "failed"
              ? "failed"
              : "completed"
          : "error",
        ...(res.session_id ? { session_id: res.session_id } : {}),
        ...(typeof res.cost_usd === "number" ? { cost_usd: res.cost_usd } : {}),
        ...(res.completed ? {} : { reason: res.error ?? "the turn had not ended when run_task returned" }),
      };
    } catch (e) {
      const err = toSessionError(e);
      const result = err.details?.result as RunResult | undefined;
      // A send_to schedule's session busy with another turn (overlap skip: send_message did not queue it).
      const busy = err.code === "SESSION_BUSY" && task.send_to !== undefined;
      done = {
        outcome: err.code === "TURN_FAILED" ? "failed" : busy ? "skipped" : "error",
        error_code: err.code,
        reason: busy ? "the session was busy (overlap: skip)" : err.message.slice(0, 500),
        ...(result?.session_id ? { session_id: result.session_id } : {}),
        ...(typeof result?.cost_usd === "number" ? { cost_usd: result.cost_usd } : {}),
      };
    }
    const final: ScheduleRun = { ...run, ...done, ended_at: new Date(this.now()).toISOString(), duration_ms: Date.now() - t0 };
    await this.o.store
      .update((f) => {
        const s = f.schedules[name];
        if (!s) return; // deleted meanwhile: the run is told (schedule.finished), not kept
        const r = s.runs.findLast((x) => x.outcome === "running" && x.started_at === run.started_at);
        if (r) Object.assign(r, final);
        else pushRun(s, final);
        if (s.running?.pid === this.me.pid) delete s.running;
      })
      .catch((e: unknown) => this.o.log.warn(`schedule ${name}: the run's record not written: ${String(e)}`));
    this.o.onFinished?.(name, final);
  }

  /** Resolves when every run this scheduler started has ended (tests). */
  async settled(): Promise<void> {
    while (this.runs.size) await Promise.all([...this.runs]);
  }

  /** Stops ticking; runs under way go on (their sessions are the server's like any other). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking?.catch(() => {});
    // No server runs them from here on (unless another one says so in its next beat).
    if (this.lastBeat) await unlink(aliveFile(this.o.store)).catch(() => {});
  }
}

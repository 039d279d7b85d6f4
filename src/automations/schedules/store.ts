/**
 * The schedules: `<state>/schedules.json` (0600), changed only as lock → read → change → whole write → unlock with
 * the store's lock (store/lock.ts, on this file), so two servers on one state directory never lose each other's
 * change, and a due run is claimed by exactly one of them (the scheduler advances `next_at` under the lock).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ScheduleRun, ScheduleView } from "../../api/schedules.js";
import { SessionError } from "../../core/errors.js";
import { acquireLock } from "../../store/lock.js";
import { writeFileWhole } from "../../util/fs/atomic.js";
import type { Logger } from "../../util/log.js";

/** Runs kept per schedule. */
export const RUNS_KEPT = 20;

export interface ScheduleRecord {
  name: string;
  cron?: string;
  at?: string;
  every?: string;
  overlap: "skip" | "queue";
  catch_up: "skip" | "once";
  paused: boolean;
  created_at: string;
  /** Epoch ms of the next due time; null when none (an `at` that ran). */
  next_at: number | null;
  /** run_task's arguments (validated when the schedule was made; the gates are applied when it runs). */
  task: Record<string, unknown>;
  /** The run going on: its server (pid and start time) and due time. */
  running?: { pid: number; start: string; due: number; since: number };
  queued?: boolean;
  runs: ScheduleRun[];
}

export interface ScheduleFile {
  v: 1;
  schedules: Record<string, ScheduleRecord>;
}

export function viewOf(s: ScheduleRecord): ScheduleView {
  return {
    name: s.name,
    ...(s.cron !== undefined ? { cron: s.cron } : {}),
    ...(s.at !== undefined ? { at: s.at } : {}),
    ...(s.every !== undefined ? { every: s.every } : {}),
    ...(typeof s.task.cwd === "string" ? { cwd: s.task.cwd } : {}),
    ...(s.task.send_to ? { send_to: s.task.send_to as ScheduleView["send_to"] } : {}),
    overlap: s.overlap,
    catch_up: s.catch_up,
    paused: s.paused,
    created_at: s.created_at,
    next_at: s.next_at === null || s.paused ? null : new Date(s.next_at).toISOString(),
    running: s.running !== undefined,
    queued: s.queued === true,
    runs: s.runs,
  };
}

export class ScheduleStore {
  readonly file: string;

  constructor(
    stateDir: string,
    private readonly log: Logger,
  ) {
    this.file = join(stateDir, "schedules.json");
  }

  async read(): Promise<ScheduleFile> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { v: 1, schedules: {} };
      throw e;
    }
    try {
      const f = JSON.parse(text) as ScheduleFile;
      if (f.v !== 1 || typeof f.schedules !== "object" || f.schedules === null)
        throw new Error("not a schedules file of version 1");
      return f;
    } catch (e) {
      throw new SessionError("INTERNAL", `${this.file} cannot be read: ${e instanceof Error ? e.message : String(e)}`, {
        suggestion: "Move the file aside (its schedules are lost) or fix it by hand.",
      });
    }
  }

  /** Runs `fn` on the file under the lock and writes it whole when `fn` returns (nothing is written if it throws). */
  async update<T>(fn: (f: ScheduleFile) => T): Promise<T> {
    const lock = await acquireLock(this.file, { staleMs: 10_000, log: this.log });
    try {
      const f = await this.read();
      const out = fn(f);
      await writeFileWhole(this.file, JSON.stringify(f, null, 1), 0o600, undefined, lock.dir);
      return out;
    } finally {
      await lock.release();
    }
  }
}

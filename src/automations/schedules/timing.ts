/**
 * When a schedule is due: a cron expression (croner: 5 or 6 fields, the server's local time), one ISO time (`at`),
 * or a fixed interval (`every`: "30s", "5m", "1h", "1d"). Each parse failure is an INVALID_ARGUMENT naming it.
 */
import { Cron } from "croner";
import { SessionError } from "../../core/errors.js";

export interface Timing {
  cron?: string;
  at?: string;
  every?: string;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The shortest interval: a schedule is not a busy loop. */
export const MIN_EVERY_MS = 1_000;

export function everyMs(every: string): number {
  const m = /^(\d{1,6})(ms|s|m|h|d)$/.exec(every);
  if (!m)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `every ${JSON.stringify(every)} is not a number and a unit ("30s", "5m", "1h", "1d")`,
    );
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (ms < MIN_EVERY_MS)
    throw new SessionError("INVALID_ARGUMENT", `every ${JSON.stringify(every)} is shorter than ${MIN_EVERY_MS / 1000} s`);
  return ms;
}

function cronOf(expr: string): Cron {
  try {
    return new Cron(expr, { paused: true });
  } catch (e) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `cron ${JSON.stringify(expr)} does not parse: ${e instanceof Error ? e.message : String(e)}`,
      {
        suggestion:
          'Give five fields (minute hour day-of-month month day-of-week), e.g. "0 7 * * 1-5", or six with seconds first.',
      },
    );
  }
}

/** Checks a new schedule's timing: exactly one kind, and it parses; `at` must be in the future. */
export function checkTiming(t: Timing, now: number): void {
  const kinds = [t.cron, t.at, t.every].filter((x) => x !== undefined).length;
  if (kinds !== 1)
    throw new SessionError("INVALID_ARGUMENT", "give exactly one of cron, at or every", {
      suggestion: 'cron: "0 7 * * 1-5"; at: an ISO time such as "2030-01-01T07:00:00Z"; every: "30s", "5m", "1h".',
    });
  if (t.cron !== undefined && cronOf(t.cron).nextRun(new Date(now)) === null)
    throw new SessionError("INVALID_ARGUMENT", `cron ${JSON.stringify(t.cron)} never matches a future time`);
  if (t.every !== undefined) everyMs(t.every);
  if (t.at !== undefined) {
    const ms = Date.parse(t.at);
    if (!/^\d{4}-\d\d-\d\dT/.test(t.at) || Number.isNaN(ms))
      throw new SessionError("INVALID_ARGUMENT", `at ${JSON.stringify(t.at)} is not an ISO time`, {
        suggestion: 'Give an ISO 8601 time with a zone, e.g. "2030-01-01T07:00:00Z".',
      });
    if (ms <= now)
      throw new SessionError("INVALID_ARGUMENT", `at ${t.at} is in the past`, {
        suggestion: "Give a time in the future (or use every/cron for repeating runs).",
      });
  }
}

/** The first due time strictly after `after` (ms), or null when there is none (an `at` that passed). */
export function nextAfter(t: Timing, after: number): number | null {
  if (t.at !== undefined) {
    const ms = Date.parse(t.at);
    return ms > after ? ms : null;
  }
  if (t.every !== undefined) return after + everyMs(t.every);
  const d = cronOf(t.cron!).nextRun(new Date(after));
  return d ? d.getTime() : null;
}

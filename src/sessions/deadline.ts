/**
 * MAX_SESSION_DURATION, counted from the start of the session's current process (a resumed old session
 * gets its full time again), and timed by the monotonic clock: the wall clock is read once, when the
 * deadline is armed (to learn how long the process has already run, which may be a server ago), and
 * never again, so a clock that jumps (NTP, a suspended VM, a person) neither ends a session early nor
 * keeps it forever. Long durations are waited for in steps no timer overflows (setTimeout's limit is 24.8 days).
 */

/** The start of the current process: process_started_at, then started_at, then created_at; undefined when none is a date. */
export function processStart(r: {
  process_started_at?: string | undefined;
  started_at?: string | undefined;
  created_at: string;
}): number | undefined {
  for (const d of [r.process_started_at, r.started_at, r.created_at]) {
    const t = d === undefined ? NaN : Date.parse(d);
    if (Number.isFinite(t)) return t;
  }
  return undefined;
}

/**
 * Milliseconds the session has left. A start that is not a date, or lies in the future (the clock went
 * back), counts as "just started": a bad record never ends a session at once.
 */
export function timeLeftMs(r: Parameters<typeof processStart>[0], maxMs: number, nowMs: number = Date.now()): number {
  const start = processStart(r);
  const ran = start === undefined ? 0 : Math.max(0, nowMs - start);
  return Math.max(0, maxMs - ran);
}

/** setTimeout takes at most 2^31-1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A one-shot timer on the monotonic clock; fires `onExpire` after `ms`, whatever the wall clock does. */
export class Deadline {
  private timer: NodeJS.Timeout | undefined;
  private readonly due: number;

  constructor(
    ms: number,
    private readonly onExpire: () => void,
    private readonly maxStepMs: number = MAX_TIMER_MS,
  ) {
    this.due = performance.now() + Math.max(0, ms);
    this.arm();
  }

  private arm(): void {
    const left = this.due - performance.now();
    if (left <= 0) {
      this.timer = undefined;
      this.onExpire();
      return;
    }
    this.timer = setTimeout(() => this.arm(), Math.min(left, this.maxStepMs));
    this.timer.unref();
  }

  /** Milliseconds until it fires (monotonic). */
  remainingMs(): number {
    return Math.max(0, this.due - performance.now());
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** One Deadline per session (MAX_SESSION_DURATION today): nothing sweeps, an idle server sleeps. */
export class Deadlines {
  private readonly timers = new Map<string, Deadline>();

  /** Runs `fn` in `ms` (replacing any deadline of `id`). */
  arm(id: string, ms: number, fn: () => void): void {
    this.clear(id);
    this.timers.set(
      id,
      new Deadline(ms, () => {
        this.timers.delete(id);
        fn();
      }),
    );
  }

  has(id: string): boolean {
    return this.timers.has(id);
  }

  get size(): number {
    return this.timers.size;
  }

  clear(id: string): void {
    this.timers.get(id)?.cancel();
    this.timers.delete(id);
  }

  clearAll(): void {
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }
}

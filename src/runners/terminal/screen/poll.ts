/**
 * One loop for "read the screen until it shows X": bounded, cancellable, a fixed pace. The screen is a fallback
 * signal; every use of it goes through here.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { SessionError } from "../../../core/errors.js";

export interface PollOptions {
  everyMs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Stop early (without a match) when this turns true, e.g. a hook answered first. */
  stop?: () => boolean;
  /** Read every `everyMs` of this instead during its first `forMs` (a change expected within milliseconds). */
  fast?: { everyMs: number; forMs: number };
}

/**
 * Reads the screen every `everyMs` until `match(screen)` returns a value (not undefined/false), the time is up,
 * or `stop()` holds. Resolves with {value, screen}; value is undefined when nothing matched.
 */
export async function pollScreen<T>(
  read: () => Promise<string>,
  match: (screen: string) => T | undefined | false,
  opts: PollOptions,
): Promise<{ value: T | undefined; screen: string }> {
  const start = Date.now();
  const end = start + opts.timeoutMs;
  let screen = "";
  for (;;) {
    if (opts.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
    if (opts.stop?.()) return { value: undefined, screen };
    screen = await read().catch(() => screen);
    const v = match(screen);
    if (v !== undefined && v !== false) return { value: v, screen };
    if (Date.now() >= end) return { value: undefined, screen };
    const every = opts.fast && Date.now() - start < opts.fast.forMs ? opts.fast.everyMs : opts.everyMs;
    await sleep(Math.min(every, Math.max(0, end - Date.now())));
  }
}

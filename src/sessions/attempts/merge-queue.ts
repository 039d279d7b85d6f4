/**
 * The merge queue (issue 34): merges run one at a time, across every server sharing the state directory (a
 * flock on `<state>/merge.lock`) and, within this process, in the order they were asked for (a promise chain: flock
 * alone does not promise an order).
 */
import { join } from "node:path";
import { acquireFileLock } from "../../util/proc/flock.js";

let tail: Promise<unknown> = Promise.resolve();

/** Runs `fn` when every merge asked for before it (here and in other processes) is done; resolves with its result and the time it waited. */
export function inMergeQueue<T>(
  stateDir: string,
  fn: () => Promise<T>,
  signal?: AbortSignal,
): Promise<{ value: T; queuedMs: number }> {
  const t0 = Date.now();
  const mine = tail.then(async () => {
    const lock = await acquireFileLock(join(stateDir, "merge.lock"), { timeoutMs: 3_600_000, ...(signal ? { signal } : {}) });
    const queuedMs = Date.now() - t0;
    try {
      return { value: await fn(), queuedMs };
    } finally {
      await lock.release();
    }
  });
  tail = mine.catch(() => undefined);
  return mine;
}

/**
 * Waiting on a condition instead of sleeping and hoping: `until(fn)` polls `fn` until it returns something truthy
 * (which it returns), and fails with the last error after `timeoutMs`. Tests sleep for a fixed time only where the
 * test is about time passing (a guard, a stale lock, a quiet period, "nothing happens"), and say so where they do.
 * No dependencies: the unit tier imports it too.
 */
export async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  stepMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** The same, with options: `waitFor(() => …, { timeoutMs: 5000 })`. */
export function waitFor<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs?: number; stepMs?: number } = {},
): Promise<T> {
  return until(fn, opts.timeoutMs, opts.stepMs);
}

/** A fixed pause, for tests about time passing only (say why at the call). */
export function elapse(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * One at a time per key, in this process: git's `worktree add` / `remove` of one repository are not safe to run
 * at once (two adds race on .git/worktrees: "failed to read …/commondir"), and a fan-out starts its sessions at once.
 */
const tails = new Map<string, Promise<unknown>>();

export function oneAtATime<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = tails.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => {});
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}

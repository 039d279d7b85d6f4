/**
 * Hand-off files (`<state>/<id>/env.*`, `<state>/<id>/handoff.*`) carry a session's environment, secrets
 * included, from the server to the launcher, which deletes them as it starts. A server that dies between
 * writing one and the launcher reading it leaves it on disk: at start-up the next server removes every
 * such file older than a few seconds, or whose session is not starting at all.
 */
import { readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";

const HANDOFF_FILE = /^(env|handoff)\./;
/** A launcher reads its hand-off within moments of the spawn; anything older is a leftover. */
export const HANDOFF_MAX_AGE_MS = 10_000;

export async function removeStaleHandoffs(
  stateDir: string,
  isStarting: (sessionId: string) => boolean,
  opts: { maxAgeMs?: number; nowMs?: number } = {},
): Promise<string[]> {
  const maxAge = opts.maxAgeMs ?? HANDOFF_MAX_AGE_MS;
  const now = opts.nowMs ?? Date.now();
  const removed: string[] = [];
  let ids: string[];
  try {
    ids = await readdir(stateDir);
  } catch {
    return removed;
  }
  for (const id of ids) {
    let names: string[];
    try {
      names = await readdir(join(stateDir, id));
    } catch {
      continue; // a file, or gone
    }
    for (const name of names) {
      if (!HANDOFF_FILE.test(name)) continue;
      const path = join(stateDir, id, name);
      try {
        const s = await stat(path);
        if (!s.isFile()) continue;
        if (isStarting(id) && now - s.mtimeMs < maxAge) continue; // a launcher may be about to read it
        await unlink(path);
        removed.push(path);
      } catch {
        /* gone meanwhile: the launcher read it */
      }
    }
  }
  return removed;
}

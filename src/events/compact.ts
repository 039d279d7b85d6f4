/**
 * Keeps a session's events log bounded. Past a size, at a quiet moment (no turn running), the log is compacted
 * under the same flock the hooks write under: the current content is copied to events.jsonl.1 (the one archive
 * kept), the file is truncated, and its first line becomes a `cs:snapshot` holding the fold of everything before.
 * Copy-and-truncate keeps the inode, so a hook that opened the file (O_APPEND) before taking the lock still lands
 * at the new end: no event is lost, and a turn's end always reaches the readers. Readers see the size drop below
 * their offset and read the file again from its snapshot.
 */
import { copyFile, stat, truncate, appendFile } from "node:fs/promises";
import { inTurn } from "../core/status.js";
import { acquireFileLock } from "../util/proc/flock.js";
import type { LiveSession } from "./live.js";

/** CLAUDE_SESSIONS_EVENTS_MAX_BYTES default: 32 MiB of events (a few thousand turns with tool output). */
export const EVENTS_MAX_BYTES = 32 * 1024 * 1024;

/** Compacts `s`'s log if it is over `maxBytes`. Resolves whether it did. */
export async function compactIfLarge(s: LiveSession, maxBytes: number): Promise<boolean> {
  const size = (await stat(s.eventsPath).catch(() => undefined))?.size ?? 0;
  if (size <= maxBytes) return false;
  const lock = await acquireFileLock(`${s.eventsPath}.lock`, { timeoutMs: 10_000 });
  try {
    // Under the lock nobody appends: read what is left, so the snapshot holds every event in the file.
    await s.refresh();
    const fold = s.fold;
    if (inTurn(fold.status)) return false;
    await copyFile(s.eventsPath, `${s.eventsPath}.1`);
    await truncate(s.eventsPath, 0);
    await appendFile(
      s.eventsPath,
      `\n${JSON.stringify({ hook_event_name: "cs:snapshot", fold, ts: new Date().toISOString() })}\n`,
    );
  } finally {
    await lock.release();
  }
  await s.refresh();
  return true;
}

/**
 * Data files of the state directory are readable by their owner alone (0600), whoever creates them: a file made
 * before a program (SQLite, flock) opens it keeps this mode, and SQLite gives its -wal and -shm files the mode of
 * the database file. Files of an older server (0644) are tightened when opened again.
 */
import { chmodSync, closeSync, constants, openSync } from "node:fs";

/** Creates `path` (mode 0600, no link followed) when missing, and makes it and its SQLite companions 0600. */
export function ensurePrivateFile(path: string, companions: readonly string[] = []): void {
  try {
    closeSync(openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600));
  } catch {
    // a link or something unopenable: the caller's own open reports it
  }
  for (const p of [path, ...companions.map((s) => path + s)]) {
    try {
      chmodSync(p, 0o600);
    } catch {
      // missing: made later with the database's mode
    }
  }
}

/** The companions SQLite makes next to a database file. */
export const SQLITE_FILES = ["-wal", "-shm", "-journal"] as const;

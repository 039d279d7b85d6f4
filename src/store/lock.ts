/**
 * The state file's lock: proper-lockfile's lock directory (`state.json.lock`, kept fresh by mtime), plus
 * two things it does not do on its own:
 *
 * - **Fast, safe stale detection.** The holder records who it is in `state.json.lock.owner`: pid, the
 *   process's start time (so a reused pid does not count), host, and the identity (inode + birth time) of
 *   the lock directory it made. A waiter that finds the directory still being the one that record names,
 *   on this host, with that process gone, ages the directory so proper-lockfile takes it over at its next
 *   try, instead of waiting for the mtime to go stale (10 s). A directory with no matching record (its holder
 *   died between making it and writing its record, or has just made it) is aged once it has gone 3 s without
 *   the refresh a live holder makes every second (a holder only stopped then loses nothing: see the fence).
 * - **A compromised lock never crashes the process.** proper-lockfile's default onCompromised throws from a
 *   timer (a process stopped longer than the stale time finds its lock taken when it resumes). Here it is
 *   logged and remembered, and `stillHeld()` tells the store, before it writes, whether the lock is still
 *   its own; if not, the store re-reads and retries instead of overwriting the other process's write.
 * - **A fence for the last step.** A lock directory is removed by renaming it aside first (then deleting it with
 *   whatever is inside). The store writes its new file inside the lock directory and renames it into place from
 *   there: a holder that was stopped between its last check and that rename, and whose lock was taken over
 *   meanwhile, finds its file gone with the old directory (ENOENT) and writes nothing. No check in user space can
 *   close that window; the kernel's path lookup in rename does.
 */
import * as fs from "node:fs";
import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import lockfile from "proper-lockfile";
import type { Logger } from "../util/log.js";
import { isAlive } from "../util/proc/process.js";

export interface HeldLock {
  /** The lock's directory (a temp file written inside it vanishes with a taken-over lock). */
  readonly dir: string;
  /** Whether the lock is (still) this process's: false once compromised or taken over. */
  stillHeld(): Promise<boolean>;
  /** The same, synchronously (for the moment right before a rename). */
  stillHeldSync(): boolean;
  release(): Promise<void>;
}

export interface LockOptions {
  /** A lock whose mtime is older than this is stale (proper-lockfile; at least 2000). */
  staleMs: number;
  log: Logger;
  /** How often a waiter checks whether the holder is still alive. */
  checkEveryMs?: number;
}

interface OwnerRecord {
  pid: number;
  start: string;
  host: string;
  dir: string;
}

/** The process's start time from /proc (clock ticks since boot); "" where /proc is not there. */
export function processStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** The pid runs and is the same process that was recorded (not a reused pid). */
export function sameProcessAlive(pid: number, start: string): boolean {
  if (!isAlive(pid)) return false;
  if (!start) return true;
  const now = processStart(pid);
  return now === "" || now === start;
}

async function dirIdentity(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path, { bigint: true });
    return `${s.ino}:${s.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

function dirIdentitySync(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.birthtimeNs}`;
  } catch {
    return undefined;
  }
}

async function readOwner(path: string): Promise<OwnerRecord | undefined> {
  try {
    const v = JSON.parse(await readFile(path, "utf8")) as Partial<OwnerRecord>;
    if (typeof v.pid !== "number" || typeof v.dir !== "string") return undefined;
    return { pid: v.pid, start: String(v.start ?? ""), host: String(v.host ?? ""), dir: v.dir };
  } catch {
    return undefined;
  }
}

const myStart = processStart(process.pid);

/** How often a holder refreshes its lock directory's mtime. */
const REFRESH_MS = 1000;
/** A lock directory no owner record names is taken over once it has not been refreshed for this long. */
const UNRECORDED_STALE_MS = 3 * REFRESH_MS;

/** A lock directory's name once set aside for removal. */
function asideName(dir: string): string {
  return `${dir}.gone-${process.pid}-${randomBytes(4).toString("hex")}`;
}

/**
 * The file system proper-lockfile uses, with a removal that renames the lock directory aside first (atomic: a
 * path inside it stops resolving at once) and then deletes it with its contents (a temp file of a writer that
 * died). ENOENT stays ENOENT, which proper-lockfile reads as "already gone".
 */
const fencingFs = {
  ...fs,
  rmdir(dir: string, cb: (err: NodeJS.ErrnoException | null) => void): void {
    const aside = asideName(dir);
    fs.rename(dir, aside, (err) => {
      if (err) return cb(err);
      fs.rm(aside, { recursive: true, force: true }, () => cb(null));
    });
  },
  rmdirSync(dir: string): void {
    const aside = asideName(dir);
    fs.renameSync(dir, aside);
    fs.rmSync(aside, { recursive: true, force: true });
  },
};

export async function acquireLock(file: string, opts: LockOptions): Promise<HeldLock> {
  const lockDir = `${file}.lock`;
  const ownerPath = `${file}.lock.owner`;
  let compromised = false;
  const watchdog = setInterval(() => void reapDeadHolder(lockDir, ownerPath, opts.log), opts.checkEveryMs ?? 100);
  watchdog.unref();
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      stale: opts.staleMs,
      update: REFRESH_MS,
      retries: { retries: 2000, factor: 1.1, minTimeout: 1, maxTimeout: 10, randomize: true },
      realpath: false,
      fs: fencingFs,
      onCompromised: (e) => {
        compromised = true;
        opts.log.warn(`the state lock was lost while held (${e.message}); the write in progress will re-read and retry`);
      },
    });
  } finally {
    clearInterval(watchdog);
  }
  const acquiredAt = performance.now();
  const dir = await dirIdentity(lockDir);
  if (dir) {
    const tmp = `${ownerPath}.${process.pid}`;
    const rec: OwnerRecord = { pid: process.pid, start: myStart, host: hostname(), dir };
    await writeFile(tmp, JSON.stringify(rec), { mode: 0o600 })
      .then(() => rename(tmp, ownerPath))
      .catch(() => unlink(tmp).catch(() => {}));
  }
  return {
    dir: lockDir,
    async stillHeld() {
      if (compromised) return false;
      // Nobody can have judged the lock stale before half the stale time: no need to look.
      if (performance.now() - acquiredAt < opts.staleMs / 2) return true;
      return dir !== undefined && (await dirIdentity(lockDir)) === dir && !compromised;
    },
    stillHeldSync() {
      return !compromised && dir !== undefined && dirIdentitySync(lockDir) === dir;
    },
    async release() {
      // After a takeover proper-lockfile refuses (ERELEASED) and leaves the other process's lock alone.
      await release().catch(() => {});
    },
  };
}

/** While waiting: when the holder recorded for the current lock directory is gone, age the directory. */
async function reapDeadHolder(lockDir: string, ownerPath: string, log: Logger): Promise<void> {
  const dir = await dirIdentity(lockDir);
  if (!dir) return;
  const owner = await readOwner(ownerPath);
  let why: string;
  if (owner && owner.dir === dir) {
    if (owner.host !== hostname()) return;
    if (sameProcessAlive(owner.pid, owner.start)) return;
    why = `holder (pid ${owner.pid}) is gone`;
  } else {
    // No record names this directory: its maker died (or was stopped) between making it and writing its record —
    // or has just made it. A live holder refreshes the directory's mtime every second.
    const mtime = await stat(lockDir).then(
      (st) => st.mtimeMs,
      () => undefined,
    );
    if (mtime === undefined || Date.now() - mtime < UNRECORDED_STALE_MS) return;
    why = `holder left no record and has not refreshed it for ${((Date.now() - mtime) / 1000).toFixed(1)} s`;
  }
  try {
    await utimes(lockDir, 0, 0);
  } catch {
    return; // gone already
  }
  // Between the look and the aging another waiter may have taken over and made a new directory: give that one its time back.
  if ((await dirIdentity(lockDir)) !== dir) {
    const now = new Date();
    await utimes(lockDir, now, now).catch(() => {});
    return;
  }
  log.info(`the state lock's ${why}; taking the lock over`);
}

/**
 * state.json: changed only as lock → read → change → atomic write → unlock. The previous version is
 * kept as state.json.bak (a hard link to the replaced file: no second write); a corrupt file is
 * recovered from it (with a warning) and kept aside as state.json.corrupt-<time>, never silently emptied.
 * A file whose JSON is fine but where some records fail the schema keeps its good records; the bad ones
 * go to state.json.quarantine-<time> with one log line (parse.ts). The lock (lock.ts) is taken over
 * quickly from a holder that died, and a lock lost while held (a stopped process) makes the write retry.
 *
 * Within one process, updates queue behind each other, so the file lock is only ever contended by
 * other processes. Reads are served from the last parsed version while the file is unchanged.
 */
import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { statSync } from "node:fs";
import { WriteAbandoned, writeFileWhole } from "../util/fs/atomic.js";
import { acquireLock } from "./lock.js";
import { parseState, quarantineText } from "./parse.js";
import { emptyState, sessionMap, STATE_VERSION, type SessionRecord, type StateFile } from "./schema.js";
import type { Logger } from "../util/log.js";

const HANDOFF_MS = 3;
/** How many times one update re-reads and retries after its lock was taken over while it held it. */
const COMPROMISED_RETRIES = 5;

export interface StoreOptions {
  /** A lock not refreshed for this long is stale (default 10 s; at least 2 s). */
  staleMs?: number;
}

/** A deep copy whose session map again has no prototype (structuredClone makes plain objects). */
function cloneState(s: StateFile): StateFile {
  const c = structuredClone(s);
  c.sessions = sessionMap(c.sessions);
  return c;
}

function keyOf(s: { ino: number; size: number; mtimeMs: number }): string {
  return `${s.ino}:${s.size}:${s.mtimeMs}`;
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

interface Cached {
  key: string;
  raw: string;
  state: StateFile;
}

export class Store {
  readonly file: string;
  readonly backup: string;
  private ready: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private cache: Cached | undefined;
  private releasedAt = 0;
  private contended = false;
  private inLock = false;
  private readonly staleMs: number;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    opts: StoreOptions = {},
  ) {
    this.staleMs = Math.max(2000, opts.staleMs ?? 10_000);
    this.file = join(dir, "state.json");
    this.backup = join(dir, "state.json.bak");
  }

  private init(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await chmod(this.dir, 0o700).catch(() => {});
      try {
        await writeFile(this.file, JSON.stringify(emptyState(), null, 2) + "\n", { flag: "wx", mode: 0o600 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
    })();
    return this.ready;
  }

  private async key(): Promise<string> {
    return keyOf(await stat(this.file));
  }

  /** The file's text and its key, from one open file (a replace between a stat and a read cannot mix two versions). */
  private async readKeyed(): Promise<{ key: string; raw: string }> {
    const fh = await open(this.file, "r");
    try {
      const key = keyOf(await fh.stat());
      return { key, raw: await fh.readFile("utf8") };
    } finally {
      await fh.close();
    }
  }

  private keySync(): string | undefined {
    try {
      return keyOf(statSync(this.file));
    } catch {
      return undefined;
    }
  }

  /**
   * The current state, without the lock: the file is replaced atomically, so a reader sees one whole
   * version. The result is shared: treat it as read-only.
   */
  async read(): Promise<Readonly<StateFile>> {
    await this.init();
    if (this.cache?.key === (await this.key())) return this.cache.state;
    const { key, raw } = await this.readKeyed();
    const { state, clean, fix } = await this.parse(raw, false);
    if (clean) this.cache = { key, raw, state };
    // Records that fail the schema or need a repair: settle that now (under the lock), once, not on some later write.
    if (fix && !this.inLock) {
      try {
        await this.update(() => {});
      } catch (e) {
        this.log.warn(`state.json: could not write the settled file (${String(e)}); serving what was read`);
        return state;
      }
      return this.read();
    }
    return state;
  }

  /** One record, as a copy the caller may change. Only the map's own keys count (`__proto__` is not a session). */
  async get(id: string): Promise<SessionRecord | undefined> {
    const sessions = (await this.read()).sessions;
    return Object.hasOwn(sessions, id) ? structuredClone(sessions[id]) : undefined;
  }

  /** The only way to change the file. `fn` may mutate the state and return a value. */
  update<T>(fn: (s: StateFile) => T | Promise<T>): Promise<T> {
    const next = this.queue.then(
      () => this.locked(fn),
      () => this.locked(fn),
    );
    this.queue = next.catch(() => {});
    return next;
  }

  private async locked<T>(fn: (s: StateFile) => T | Promise<T>): Promise<T> {
    await this.init();
    for (let attempt = 0; ; attempt++) {
      const out = await this.lockedOnce(fn, attempt >= COMPROMISED_RETRIES);
      if (out.done) return out.result;
      this.log.warn(`state.json: the lock was taken over while this update held it; re-reading and retrying (${attempt + 1})`);
    }
  }

  /** One try: `done: false` when the lock turned out not to be ours any more before the write (nothing written). */
  private async lockedOnce<T>(
    fn: (s: StateFile) => T | Promise<T>,
    lastTry: boolean,
  ): Promise<{ done: true; result: T } | { done: false }> {
    // The lock's waiters retry at random; a process that just released it would win it straight back and
    // starve the others. When others were seen waiting, step aside for a moment before taking it again.
    if (this.contended && Date.now() - this.releasedAt < HANDOFF_MS) await sleep(HANDOFF_MS);
    const t0 = Date.now();
    const lock = await acquireLock(this.file, { staleMs: this.staleMs, log: this.log });
    const lockWaited = Date.now() - t0 > 1;
    this.inLock = true;
    try {
      let key = await this.key();
      let raw: string;
      let state: StateFile;
      let clean: boolean;
      if (this.cache?.key === key) {
        raw = this.cache.raw;
        state = cloneState(this.cache.state);
        clean = true;
      } else {
        ({ key, raw } = await this.readKeyed());
        ({ state, clean } = await this.parse(raw, true));
      }
      const result = await fn(state);
      state.version = STATE_VERSION;
      state.updated_at = new Date().toISOString();
      const text = JSON.stringify(state, null, 2) + "\n";
      if (text !== raw) {
        // Another process may have taken the lock while this one was stopped: then its write must not be overwritten.
        if (!(await lock.stillHeld()) && !lastTry) return { done: false };
        if (clean) await this.keepBackup();
        // Checked again at the last moment (after the slow fsync), with no await before the rename: the lock is
        // still ours and nobody replaced the file since it was read.
        const stillMine = () => lastTry || (lock.stillHeldSync() && this.keySync() === key);
        let written;
        try {
          // Written inside the lock's directory: if the lock is taken over before the rename, the file is gone with it.
          written = await writeFileWhole(this.file, text, 0o600, stillMine, lock.dir);
        } catch (e) {
          if (e instanceof WriteAbandoned) return { done: false };
          throw e;
        }
        // The key of the file this process wrote, not of whatever the path shows now: a process stopped right after
        // its rename, whose lock was taken over meanwhile, must not take the other's file for its own (it would then
        // serve its own older state from the cache and overwrite the other's update with it).
        this.cache = { key: keyOf(written), raw: text, state: cloneState(state) };
      }
      return { done: true, result };
    } finally {
      this.inLock = false;
      await lock.release();
      this.releasedAt = Date.now();
      this.contended = this.releasedAt - t0 > HANDOFF_MS * 2 || lockWaited;
    }
  }

  /** The file about to be replaced becomes the backup: a hard link, so its bytes are not written again. */
  private async keepBackup(): Promise<void> {
    const tmp = `${this.backup}.${randomBytes(4).toString("hex")}`;
    try {
      await link(this.file, tmp);
      await rename(tmp, this.backup);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      this.log.warn(`could not keep state.json.bak: ${String(e)}`);
    }
  }

  /** Changes one record; resolves to a copy of it, or undefined when it is not there. */
  async patch(id: string, fn: (r: SessionRecord) => void): Promise<SessionRecord | undefined> {
    return this.update((s) => {
      if (!Object.hasOwn(s.sessions, id)) return undefined;
      const r = s.sessions[id]!;
      fn(r);
      return structuredClone(r);
    });
  }

  /**
   * `clean`: the text was a valid state file as it is (it may become the backup). `bad`: some records failed
   * the schema (kept out of the state; quarantined to a file when `locked`, since the write that follows drops them).
   * `fix`: records were set aside or repaired, so the file should be written again.
   */
  private async parse(raw: string, locked: boolean): Promise<{ state: StateFile; clean: boolean; fix?: boolean }> {
    let parsed;
    try {
      parsed = parseState(raw);
    } catch (e) {
      return this.recover(raw, locked, e instanceof Error ? e.message : String(e));
    }
    if (locked) for (const r of parsed.repairs) this.log.warn(`state.json: repaired ${r}`);
    if (!parsed.bad.length)
      return parsed.repairs.length ? { state: parsed.state, clean: false, fix: true } : { state: parsed.state, clean: true };
    const ids = parsed.bad.map((b) => `${JSON.stringify(b.id)} (${b.why})`).join(", ");
    const kept = Object.keys(parsed.state.sessions).length;
    if (locked) {
      const aside = `${this.file}.quarantine-${stamp()}`;
      await writeFileWhole(aside, quarantineText(parsed.bad, this.file)).catch((e: unknown) => {
        this.log.error(`state.json: could not write ${aside}: ${String(e)}`);
      });
      this.log.warn(
        `state.json: ${parsed.bad.length} record(s) fail the schema and were moved to ${aside}: ${ids}; kept ${kept} good record(s)`,
      );
    }
    return { state: parsed.state, clean: false, fix: true };
  }

  /** A file that is not a state file at all: the backup, or (under the lock) an empty state; the broken file is kept aside. */
  private async recover(raw: string, locked: boolean, why: string): Promise<{ state: StateFile; clean: boolean }> {
    let recovered: StateFile | undefined;
    try {
      recovered = parseState(await readFile(this.backup, "utf8")).state;
    } catch {
      recovered = undefined;
    }
    if (locked) {
      // Keep the broken file for a person to look at; the write that follows replaces it.
      const aside = `${this.file}.corrupt-${stamp()}`;
      await writeFileWhole(aside, raw).catch(() => {});
      this.log.warn(
        `state.json was unreadable (${why}); kept it as ${aside}; ${recovered ? "recovered from state.json.bak" : "no usable backup, starting empty"}`,
      );
    } else {
      this.log.warn(`state.json is unreadable (${why}); ${recovered ? "reading state.json.bak" : "no usable backup"}`);
    }
    if (recovered) return { state: recovered, clean: false };
    if (!locked) throw new Error(`state.json is unreadable (${why}) and there is no usable backup at ${this.backup}`);
    return { state: emptyState(), clean: false };
  }
}

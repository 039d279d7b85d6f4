/**
 * state.json: changed only as lock → read → change → atomic write → unlock. The previous version is
 * kept as state.json.bak (a hard link to the replaced file: no second write); a corrupt file is
 * recovered from it (with a warning) and kept aside as state.json.corrupt-<time>, never silently emptied.
 * A file whose JSON is fine but where some records fail the schema keeps its good records; the bad ones
 * go to state.json.quarantine-<time> with one log line (parse.ts). The lock (lock.ts) is taken over
 * quickly from a holder that died, and a lock lost while held (a stopped process) makes the write retry.
 *
 * Within one process, updates queue behind each other (those queued during a write go together into the next one),
 * so the file lock is only ever contended by other processes. Reads are served from the last parsed version while the
 * file is unchanged.
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
/** At most this many updates go into one write (the lock is held while they all run). */
const MAX_BATCH = 64;

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

interface Pending {
  fn: (s: StateFile) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

interface Cached {
  key: string;
  raw: string;
  state: StateFile;
}

/**
 * Runs the batch's functions in order on `state`. When one throws it is set aside, and the others run again on a
 * `fresh()` copy, so a failed update leaves nothing half done. `applied`: the state they all changed, or undefined
 * when none is left.
 */
async function applyAll(
  batch: Pending[],
  state: StateFile,
  fresh: () => Promise<StateFile>,
): Promise<{ applied?: StateFile; results: Map<Pending, unknown>; failed: Map<Pending, { error: unknown }> }> {
  const failed = new Map<Pending, { error: unknown }>();
  let live = batch;
  while (live.length) {
    const results = new Map<Pending, unknown>();
    let bad: Pending | undefined;
    for (const p of live) {
      try {
        results.set(p, await p.fn(state));
      } catch (error) {
        failed.set((bad = p), { error });
        break;
      }
    }
    if (!bad) return { applied: state, results, failed };
    live = live.filter((p) => p !== bad);
    if (live.length) state = await fresh();
  }
  return { results: new Map(), failed };
}

export class Store {
  readonly file: string;
  readonly backup: string;
  private ready: Promise<void> | undefined;
  private pending: Pending[] = [];
  private draining: Promise<void> | undefined;
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

  /**
   * The only way to change the file. `fn` may mutate the state and return a value. Updates given while a write is
   * under way go together into the next one, applied in the order given (one lock, one read, one write for the lot:
   * four sessions starting at once make a handful of writes, not a score). Each still resolves only once its change is
   * in the file, and one that throws changes nothing: the others are applied again without it.
   */
  update<T>(fn: (s: StateFile) => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.draining ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    try {
      // Updates given in the same tick as the first go with it.
      await Promise.resolve();
      while (this.pending.length) await this.locked(this.pending.splice(0, MAX_BATCH));
    } finally {
      this.draining = undefined;
    }
  }

  private async locked(batch: Pending[]): Promise<void> {
    try {
      await this.init();
      for (let attempt = 0; ; attempt++) {
        const out = await this.lockedOnce(batch, attempt >= COMPROMISED_RETRIES);
        if (out.done) {
          for (const p of batch) {
            const failed = out.failed.get(p);
            if (failed) p.reject(failed.error);
            else p.resolve(out.results.get(p));
          }
          return;
        }
        this.log.warn(`state.json: the lock was taken over while this update held it; re-reading and retrying (${attempt + 1})`);
      }
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }

  /**
   * One try: `done: false` when the lock turned out not to be ours any more before the write (nothing written).
   * The batch is applied by applyAll.
   */
  private async lockedOnce(
    batch: Pending[],
    lastTry: boolean,
  ): Promise<{ done: true; results: Map<Pending, unknown>; failed: Map<Pending, { error: unknown }> } | { done: false }> {
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
      const cached = this.cache?.key === key ? this.cache : undefined;
      if (cached) {
        raw = cached.raw;
        state = cloneState(cached.state);
        clean = true;
      } else {
        ({ key, raw } = await this.readKeyed());
        ({ state, clean } = await this.parse(raw, true));
      }
      const fresh = async () => (cached ? cloneState(cached.state) : (await this.parse(raw, false)).state);
      const { applied, results, failed } = await applyAll(batch, state, fresh);
      // Nothing left to apply: nothing is written (as for a lone update that throws).
      if (!applied) return { done: true, results, failed };
      state = applied;
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
      return { done: true, results, failed };
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

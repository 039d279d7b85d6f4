/**
 * state.json: changed only as lock → read → change → atomic write → unlock. The previous version is
 * kept as state.json.bak (a hard link to the replaced file: no second write); a corrupt file is
 * recovered from it (with a warning) and kept aside as state.json.corrupt-<time>, never silently emptied.
 *
 * Within one process, updates queue behind each other, so the file lock is only ever contended by
 * other processes. Reads are served from the last parsed version while the file is unchanged.
 */
import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import lockfile from "proper-lockfile";
import writeFileAtomic from "write-file-atomic";
import { emptyState, StateFileSchema, STATE_VERSION, type SessionRecord, type StateFile } from "./schema.js";
import type { Logger } from "../util/log.js";

const HANDOFF_MS = 3;

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

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {
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
    const s = await stat(this.file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  }

  /**
   * The current state, without the lock: the file is replaced atomically, so a reader sees one whole
   * version. The result is shared: treat it as read-only.
   */
  async read(): Promise<Readonly<StateFile>> {
    await this.init();
    const key = await this.key();
    if (this.cache?.key === key) return this.cache.state;
    const raw = await readFile(this.file, "utf8");
    const { state, clean } = await this.parse(raw, false);
    if (clean) this.cache = { key, raw, state };
    return state;
  }

  /** One record, as a copy the caller may change. */
  async get(id: string): Promise<SessionRecord | undefined> {
    const r = (await this.read()).sessions[id];
    return r ? structuredClone(r) : undefined;
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
    // The lock's waiters retry at random; a process that just released it would win it straight back and
    // starve the others. When others were seen waiting, step aside for a moment before taking it again.
    if (this.contended && Date.now() - this.releasedAt < HANDOFF_MS) await sleep(HANDOFF_MS);
    const t0 = Date.now();
    const release = await lockfile.lock(this.file, {
      stale: 10_000,
      update: 2_000,
      retries: { retries: 2000, factor: 1.1, minTimeout: 1, maxTimeout: 10, randomize: true },
      realpath: false,
    });
    const lockWaited = Date.now() - t0 > 1;
    try {
      const key = await this.key();
      let raw: string;
      let state: StateFile;
      let clean: boolean;
      if (this.cache?.key === key) {
        raw = this.cache.raw;
        state = structuredClone(this.cache.state);
        clean = true;
      } else {
        raw = await readFile(this.file, "utf8");
        ({ state, clean } = await this.parse(raw, true));
      }
      const result = await fn(state);
      state.version = STATE_VERSION;
      state.updated_at = new Date().toISOString();
      const text = JSON.stringify(state, null, 2) + "\n";
      if (text !== raw) {
        if (clean) await this.keepBackup();
        await writeFileAtomic(this.file, text, { mode: 0o600 });
        this.cache = { key: await this.key(), raw: text, state: structuredClone(state) };
      }
      return result;
    } finally {
      await release().catch(() => {});
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
      const r = s.sessions[id];
      if (!r) return undefined;
      fn(r);
      return structuredClone(r);
    });
  }

  private async parse(raw: string, locked: boolean): Promise<{ state: StateFile; clean: boolean }> {
    try {
      if (!raw.trim()) throw new Error("the file is empty");
      return { state: StateFileSchema.parse(JSON.parse(raw)), clean: true };
    } catch (e) {
      const why = e instanceof Error ? e.message.split("\n")[0] : String(e);
      let recovered: StateFile | undefined;
      try {
        recovered = StateFileSchema.parse(JSON.parse(await readFile(this.backup, "utf8")));
      } catch {
        recovered = undefined;
      }
      if (locked) {
        // Keep the broken file for a person to look at; the write that follows replaces it.
        const aside = `${this.file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
        await writeFileAtomic(aside, raw, { mode: 0o600 }).catch(() => {});
        this.log.warn(`state.json was unreadable (${why}); kept it as ${aside}; ${recovered ? "recovered from state.json.bak" : "no usable backup, starting empty"}`);
      } else {
        this.log.warn(`state.json is unreadable (${why}); ${recovered ? "reading state.json.bak" : "no usable backup"}`);
      }
      if (recovered) return { state: recovered, clean: false };
      if (!locked) throw new Error(`state.json is unreadable (${why}) and there is no usable backup at ${this.backup}`);
      return { state: emptyState(), clean: false };
    }
  }
}

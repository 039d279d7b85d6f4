/**
 * state.json: changed only as lock → read → change → atomic write → unlock. A copy of the last good
 * file is kept as state.json.bak; a corrupt file is recovered from it (with a warning) and kept
 * aside as state.json.corrupt-<time>, never silently emptied.
 */
import { mkdir, readFile, rename, chmod, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import lockfile from "proper-lockfile";
import writeFileAtomic from "write-file-atomic";
import { emptyState, StateFileSchema, STATE_VERSION, type SessionRecord, type StateFile } from "./schema.js";
import type { Logger } from "../util/log.js";

export class Store {
  readonly file: string;
  readonly backup: string;
  private ready: Promise<void> | undefined;

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

  /** Reads without the lock: the file is replaced atomically, so a reader sees one whole version. */
  async read(): Promise<StateFile> {
    await this.init();
    return this.parse(await readFile(this.file, "utf8"), false);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return (await this.read()).sessions[id];
  }

  /** The only way to change the file. `fn` may mutate the state and return a value. */
  async update<T>(fn: (s: StateFile) => T | Promise<T>): Promise<T> {
    await this.init();
    const release = await lockfile.lock(this.file, {
      stale: 10_000,
      update: 2_000,
      retries: { retries: 400, factor: 1.2, minTimeout: 2, maxTimeout: 25, randomize: true },
      realpath: false,
    });
    try {
      const raw = await readFile(this.file, "utf8");
      const state = await this.parse(raw, true);
      const result = await fn(state);
      state.version = STATE_VERSION;
      state.updated_at = new Date().toISOString();
      const text = JSON.stringify(state, null, 2) + "\n";
      if (text !== raw) {
        if (raw.trim() && this.isValid(raw)) await writeFileAtomic(this.backup, raw, { mode: 0o600 });
        await writeFileAtomic(this.file, text, { mode: 0o600 });
      }
      return result;
    } finally {
      await release().catch(() => {});
    }
  }

  /** Changes one record; throws if it is not there. */
  async patch(id: string, fn: (r: SessionRecord) => void): Promise<SessionRecord | undefined> {
    return this.update((s) => {
      const r = s.sessions[id];
      if (!r) return undefined;
      fn(r);
      return structuredClone(r);
    });
  }

  private isValid(raw: string): boolean {
    try {
      return StateFileSchema.safeParse(JSON.parse(raw)).success;
    } catch {
      return false;
    }
  }

  private async parse(raw: string, locked: boolean): Promise<StateFile> {
    try {
      if (!raw.trim()) throw new Error("the file is empty");
      return StateFileSchema.parse(JSON.parse(raw));
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
        await rename(this.file, aside).catch(() => {});
        await writeFileAtomic(this.file, raw, { mode: 0o600 }).catch(() => {});
        this.log.warn(`state.json was unreadable (${why}); kept it as ${aside}; ${recovered ? "recovered from state.json.bak" : "no usable backup, starting empty"}`);
      } else {
        this.log.warn(`state.json is unreadable (${why}); ${recovered ? "reading state.json.bak" : "no usable backup"}`);
      }
      if (recovered) return recovered;
      if (!locked) throw new Error(`state.json is unreadable (${why}) and there is no usable backup at ${this.backup}`);
      return emptyState();
    }
  }

  async mode(): Promise<number> {
    return (await stat(this.file)).mode & 0o777;
  }
}

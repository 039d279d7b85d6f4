/**
 * Idempotency records (issue 31): what a call with an `idempotency_key` did, kept 24 h so a retry of it gets the
 * same answer instead of running the work again — in this server, after a restart, and in another server on the
 * same state directory. One file per (caller, tool, key) under `<state>/idempotency/`, named by the SHA-256 of the
 * three (the key itself is not written). A claim is a complete file put in place with link(2), which fails when the
 * name exists, so of two servers exactly one runs the call and the file is never seen half-written; the outcome
 * replaces it whole (util/fs/atomic.ts). While the call runs the file names its server (pid and start time): a retry
 * waits for the outcome, and one whose server is gone learns that the outcome is unknown. Why files and not a
 * SQLite table: ARCHITECTURE.md ("Idempotency keys").
 */
import { createHash, randomBytes } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { link, mkdir, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ErrorBody } from "../core/errors.js";
import { writeFileWhole } from "../util/fs/atomic.js";
import { processStart, sameProcessAlive } from "./lock.js";

/** How long a key binds its call. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export type IdemOutcome = { ok: true; value: unknown } | { ok: false; error: ErrorBody };

export interface IdemRecord {
  v: 1;
  tool: string;
  /** SHA-256 of the call's arguments (canonical JSON, `env` reduced to its names): another call with the key differs. */
  args: string;
  created_ms: number;
  owner: { pid: number; start: string };
  /** Absent while the call runs. */
  done?: IdemOutcome;
}

export type Claim =
  { mine: true; finish(o: IdemOutcome): Promise<void>; release(): Promise<void> } | { mine: false; record: IdemRecord };

/** Why a wait ended without an outcome: the server that claimed the key is gone. */
export class OwnerGone extends Error {}

export class IdempotencyStore {
  readonly dir: string;
  private made = false;
  private lastSweep = 0;

  constructor(
    stateDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.dir = join(stateDir, "idempotency");
  }

  private pathOf(caller: string, tool: string, key: string): string {
    return join(
      this.dir,
      `${createHash("sha256")
        .update(JSON.stringify([caller, tool, key]))
        .digest("hex")}.json`,
    );
  }

  /** The record of (caller, tool, key) if one exists and has not expired. */
  async get(caller: string, tool: string, key: string): Promise<IdemRecord | undefined> {
    const r = await this.read(this.pathOf(caller, tool, key));
    return r && !this.expired(r) ? r : undefined;
  }

  /** Claims the key for a call about to run (`mine`), or returns the record of the call that has it. */
  async claim(caller: string, tool: string, key: string, args: string): Promise<Claim> {
    await this.ensureDir();
    this.sweepSoon();
    const path = this.pathOf(caller, tool, key);
    // A repeat (the common case of a retry) is a read; only a new key writes.
    const seen = await this.read(path);
    if (seen && !this.expired(seen)) return { mine: false, record: seen };
    for (let attempt = 0; ; attempt++) {
      const rec: IdemRecord = {
        v: 1,
        tool,
        args,
        created_ms: this.now(),
        owner: { pid: process.pid, start: processStart(process.pid) },
      };
      if (await this.place(path, rec)) {
        return {
          mine: true,
          finish: async (o) => {
            await writeFileWhole(path, JSON.stringify({ ...rec, done: o }));
          },
          release: () => unlink(path).catch(() => {}),
        };
      }
      const there = await this.read(path);
      if (there && !this.expired(there)) return { mine: false, record: there };
      // Expired (or not ours to read): taken away, then claimed again. A few rounds at most: another server is
      // doing the same.
      if (attempt >= 5) throw new Error(`could not claim the idempotency record ${path}`);
      await this.removeIf(path, there);
    }
  }

  /**
   * Waits until the call holding the key has an outcome; undefined when its record went away (the call was refused,
   * which frees the key). Throws OwnerGone when its server ended first, and the signal's reason when the waiter is
   * cancelled.
   */
  async wait(
    caller: string,
    tool: string,
    key: string,
    signal?: AbortSignal,
  ): Promise<(IdemRecord & { done: IdemOutcome }) | undefined> {
    const path = this.pathOf(caller, tool, key);
    const name = path.slice(this.dir.length + 1);
    let wake: () => void = () => {};
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(this.dir, (_e, f) => {
        if (f === name) wake();
      });
      watcher.on("error", () => {});
    } catch {
      // no watch: the poll below still sees it
    }
    try {
      for (;;) {
        signal?.throwIfAborted();
        const r = await this.read(path);
        if (!r || this.expired(r)) return undefined;
        if (r.done) return r as IdemRecord & { done: IdemOutcome };
        if (!sameProcessAlive(r.owner.pid, r.owner.start)) {
          const again = await this.read(path);
          if (again?.done) return again as IdemRecord & { done: IdemOutcome };
          throw new OwnerGone(`the server that ran it (pid ${r.owner.pid}) ended before it finished`);
        }
        await new Promise<void>((res) => {
          const t = setTimeout(done, 250);
          function done() {
            clearTimeout(t);
            signal?.removeEventListener("abort", done);
            res();
          }
          wake = done;
          signal?.addEventListener("abort", done, { once: true });
        });
      }
    } finally {
      watcher?.close();
    }
  }

  /** Removes the records older than the TTL (at most once a minute, in the background of a claim). */
  private sweepSoon(): void {
    if (this.now() - this.lastSweep < 60_000) return;
    this.lastSweep = this.now();
    void this.sweep().catch(() => {});
  }

  async sweep(): Promise<number> {
    let n = 0;
    for (const f of await readdir(this.dir).catch(() => [] as string[])) {
      if (!f.endsWith(".json")) continue;
      const p = join(this.dir, f);
      const r = await this.read(p);
      if (r && !this.expired(r)) continue;
      if (!r) {
        // Unreadable: only once it is old (a file being put in place is never unreadable, but be patient).
        const st = await stat(p).catch(() => undefined);
        if (!st || this.now() - st.mtimeMs < IDEMPOTENCY_TTL_MS) continue;
      }
      await this.removeIf(p, r);
      n++;
    }
    return n;
  }

  private expired(r: IdemRecord): boolean {
    return this.now() - r.created_ms >= IDEMPOTENCY_TTL_MS;
  }

  private async ensureDir(): Promise<void> {
    if (this.made) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.made = true;
  }

  /** Puts `rec` at `path` whole, unless a file is there (false). */
  private async place(path: string, rec: IdemRecord): Promise<boolean> {
    const tmp = join(this.dir, `.claim.${process.pid}.${randomBytes(6).toString("hex")}`);
    await writeFile(tmp, JSON.stringify(rec), { mode: 0o600, flag: "wx" });
    try {
      await link(tmp, path);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  private async read(path: string): Promise<IdemRecord | undefined> {
    try {
      const r = JSON.parse(await readFile(path, "utf8")) as IdemRecord;
      return r && r.v === 1 && typeof r.args === "string" && typeof r.created_ms === "number" && r.owner ? r : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Removes the record at `path` if it is still `seen` (an expired one): moved aside first and looked at, so a
   * fresh claim another server made meanwhile is put back rather than lost.
   */
  private async removeIf(path: string, seen: IdemRecord | undefined): Promise<void> {
    const aside = join(this.dir, `.expired.${process.pid}.${randomBytes(6).toString("hex")}`);
    try {
      await rename(path, aside);
    } catch {
      return; // gone already
    }
    const moved = await this.read(aside);
    const same =
      seen === undefined
        ? moved === undefined || this.expired(moved)
        : moved !== undefined && moved.created_ms === seen.created_ms && moved.owner.pid === seen.owner.pid;
    if (!same) await link(aside, path).catch(() => {});
    await unlink(aside).catch(() => {});
  }
}

/** Canonical JSON: object keys sorted, so the same arguments in another order hash the same. */
export function canonicalJson(v: unknown): string {
  const canon = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(canon)
      : x && typeof x === "object"
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, canon((x as Record<string, unknown>)[k])]),
          )
        : x;
  return JSON.stringify(canon(v));
}

/**
 * The sessions this process follows: one LiveSession (fold, log tail, waiters) per session it has looked at,
 * the batching of their folds into state.json, and the release of followers of ended sessions (a long-running
 * server must not keep a file watch per session it ever saw).
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SessionError } from "../core/errors.js";
import { inTurn, isLive } from "../core/status.js";
import { compactIfLarge, EVENTS_MAX_BYTES } from "../events/compact.js";
import { appendEvent } from "../events/eventlog.js";
import { LiveSession } from "../events/live.js";
import type { LogEvent } from "../events/reducer.js";
import type { SessionRecord } from "../store/schema.js";
import type { Store } from "../store/store.js";
import type { Logger } from "../util/log.js";
import type { DriverSession } from "../runners/driver.js";
import { applyFold } from "./views.js";

/** Status writes wait this long to take in the other events of a burst (tool answers use the live fold). */
const PERSIST_GATHER_MS = 20;
/** A follower of an ended session is released this long after its last event, unless someone waits on it. */
export const RELEASE_AFTER_MS = 2000;

/** The generation field for an exit the server records itself: the exit belongs to the current process. */
export function generationOf(f: { generation?: number }): { generation?: number } {
  return f.generation !== undefined ? { generation: f.generation } : {};
}

export interface SessionPaths {
  dir: string;
  eventsPath: string;
  rawLogPath: string;
  settingsPath: string;
}

export class Registry {
  private readonly live = new Map<string, LiveSession>();
  private readonly releases = new Map<string, NodeJS.Timeout>();
  private readonly dirty = new Set<string>();
  private flushing: Promise<void> | undefined;
  private closed = false;
  /** Called once a session is no longer followed (released after its end, or dropped): forget what is kept of it. */
  onForget: (id: string) => void = () => {};

  constructor(
    private readonly stateDir: string,
    private readonly store: Store,
    private readonly hookScript: string,
    private readonly log: Logger,
    /** Called after every batch of events folded (persisting is done here). */
    private readonly onEvents: (s: LiveSession, events: LogEvent[]) => void,
    private readonly releaseAfterMs = RELEASE_AFTER_MS,
    private readonly eventsMaxBytes = EVENTS_MAX_BYTES,
    private readonly persistGatherMs = PERSIST_GATHER_MS,
  ) {}

  private readonly compacting = new Set<string>();
  /** Sessions kill_session is ending now: an end already folded is the kill's, not a zombie (list_sessions). */
  readonly killing = new Set<string>();

  /** A log past its cap is compacted once its turn is over (compact.ts); never two at once for a session. */
  private maybeCompact(s: LiveSession): void {
    const st = s.fold.status;
    if (this.compacting.has(s.id) || inTurn(st) || st === "starting") return;
    this.compacting.add(s.id);
    void compactIfLarge(s, this.eventsMaxBytes)
      .then((did) => did && this.log.info(`${s.id}: events log compacted (over ${this.eventsMaxBytes} bytes; the previous content is events.jsonl.1)`))
      .catch((e: unknown) => this.log.warn(`${s.id}: compacting the events log failed: ${String(e)}`))
      .finally(() => this.compacting.delete(s.id));
  }

  paths(id: string): SessionPaths {
    const dir = join(this.stateDir, id);
    return { dir, eventsPath: join(dir, "events.jsonl"), rawLogPath: join(dir, "output.log"), settingsPath: join(dir, "settings.json") };
  }

  /** The stored record, or SESSION_NOT_FOUND. */
  async record(id: string): Promise<SessionRecord> {
    const r = await this.store.get(id);
    if (!r) throw new SessionError("SESSION_NOT_FOUND", `no session with id ${JSON.stringify(id)}.`);
    return r;
  }

  /** The live view of a session, replaying its events log the first time this process looks at it. */
  async follow(id: string): Promise<LiveSession> {
    this.cancelRelease(id);
    let s = this.live.get(id);
    if (s) return s;
    s = new LiveSession(id, this.paths(id).eventsPath, (ls, evs) => this.folded(ls, evs), (e) => this.log.warn(`events of ${id}: ${String(e)}`));
    this.live.set(id, s);
    await s.start();
    return s;
  }

  /** The follower of a session, if this process has one (no log is read). */
  followed(id: string): LiveSession | undefined {
    return this.live.get(id);
  }

  /** What a driver needs of a session. */
  async handle(id: string): Promise<DriverSession> {
    const live = await this.follow(id);
    return { id, live, rawLogPath: this.paths(id).rawLogPath, emit: (ev) => this.emit(id, ev) };
  }

  /** Appends one of the server's own events through the hooks' locked path, then folds it at once. */
  async emit(id: string, ev: LogEvent): Promise<void> {
    // A session the server writes to is in use: a follower just made for it (a resume of an ended session replays
    // to dead) is not released while its cs:spawn is on its way, which would leave the caller a closed view.
    this.cancelRelease(id);
    await appendEvent(this.hookScript, this.paths(id).eventsPath, ev);
    await this.live.get(id)?.refresh();
  }

  private folded(s: LiveSession, events: LogEvent[]): void {
    this.persist(s.id);
    this.onEvents(s, events);
    if (!isLive(s.fold.status)) this.scheduleRelease(s);
    else if (!events.some((e) => e.hook_event_name === "cs:snapshot")) this.maybeCompact(s);
  }

  private scheduleRelease(s: LiveSession): void {
    this.cancelRelease(s.id);
    const t = setTimeout(() => {
      this.releases.delete(s.id);
      if (this.live.get(s.id) !== s || isLive(s.fold.status) || s.listenerCount > 0) return;
      s.close();
      this.live.delete(s.id);
      this.onForget(s.id);
    }, this.releaseAfterMs);
    t.unref();
    this.releases.set(s.id, t);
  }

  private cancelRelease(id: string): void {
    const t = this.releases.get(id);
    if (t) clearTimeout(t);
    this.releases.delete(id);
  }

  /** Forgets a session (its record was deleted). */
  drop(id: string): void {
    this.cancelRelease(id);
    this.live.get(id)?.close();
    this.live.delete(id);
    this.onForget(id);
  }

  /** How many sessions this process follows (for tests and health). */
  get size(): number {
    return this.live.size;
  }

  /**
   * Writes folded statuses into state.json. Changes of every session that arrive while a write is under way go
   * into the next one: one locked write per burst, whatever the number of sessions.
   */
  persist(id: string): void {
    this.dirty.add(id);
    this.flushing ??= (async () => {
      try {
        // A turn brings several events in quick succession: gather them into one write.
        await sleep(this.persistGatherMs);
        while (this.dirty.size) {
          const ids = [...this.dirty];
          this.dirty.clear();
          try {
            await this.store.update((st) => {
              for (const i of ids) {
                const s = this.live.get(i);
                const r = st.sessions[i];
                if (s && r) applyFold(r, s.fold);
              }
            });
          } catch (e) {
            this.log.warn(`saving session statuses failed: ${String(e)}`);
          }
        }
      } finally {
        this.flushing = undefined;
      }
    })();
  }

  /** Resolves once the status written for every session includes everything folded so far. */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.releases.values()) clearTimeout(t);
    this.releases.clear();
    await Promise.all([...this.live.values()].map((s) => s.refresh()));
    await this.flushed();
    for (const s of this.live.values()) s.close();
    this.live.clear();
  }
}

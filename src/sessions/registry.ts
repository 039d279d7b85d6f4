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
import { Session } from "./session.js";
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
  /** The sessions this process follows: the one map of per-session state (session.ts). */
  private readonly sessions = new Map<string, Session>();
  /** Sessions whose fold waits for the next write to state.json (a queue, emptied by every write). */
  private readonly dirty = new Set<string>();
  private flushing: Promise<void> | undefined;
  private closed = false;
  /**
   * Called once a session is no longer followed (released after its end, or dropped): forget what is kept of it.
   * `removed`: dropped because its record was deleted (it will not come back).
   */
  onForget: (id: string, s: Session | undefined, removed: boolean) => void = () => {};

  constructor(
    private readonly stateDir: string,
    private readonly store: Store,
    private readonly log: Logger,
    /** Called after every batch of events folded (persisting is done here). */
    private readonly onEvents: (s: LiveSession, events: LogEvent[]) => void,
    private readonly releaseAfterMs = RELEASE_AFTER_MS,
    private readonly eventsMaxBytes = EVENTS_MAX_BYTES,
    private readonly persistGatherMs = PERSIST_GATHER_MS,
  ) {}

  /** A log past its cap is compacted once its turn is over (compact.ts); never two at once for a session. */
  private maybeCompact(x: Session): void {
    const s = x.live;
    const st = s.fold.status;
    if (x.compacting || inTurn(st) || st === "starting") return;
    x.compacting = true;
    void compactIfLarge(s, this.eventsMaxBytes)
      .then(
        (did) =>
          did &&
          this.log.info(
            `${s.id}: events log compacted (over ${this.eventsMaxBytes} bytes; the previous content is events.jsonl.1)`,
          ),
      )
      .catch((e: unknown) => this.log.warn(`${s.id}: compacting the events log failed: ${String(e)}`))
      .finally(() => (x.compacting = false));
  }

  paths(id: string): SessionPaths {
    const dir = join(this.stateDir, id);
    return {
      dir,
      eventsPath: join(dir, "events.jsonl"),
      rawLogPath: join(dir, "output.log"),
      settingsPath: join(dir, "settings.json"),
    };
  }

  /** The stored record, or SESSION_NOT_FOUND. */
  async record(id: string): Promise<SessionRecord> {
    const r = await this.store.get(id);
    if (!r) throw new SessionError("SESSION_NOT_FOUND", `no session with id ${JSON.stringify(id)}.`);
    return r;
  }

  /** The live view of a session, replaying its events log the first time this process looks at it. */
  async follow(id: string): Promise<LiveSession> {
    return (await this.open(id)).live;
  }

  /**
   * The session object, made here the first time this process looks at the session (the one place one is made):
   * its follower replays the events log.
   */
  async open(id: string): Promise<Session> {
    this.cancelRelease(id);
    let x = this.sessions.get(id);
    if (x) return x;
    x = new Session(
      new LiveSession(
        id,
        this.paths(id).eventsPath,
        (ls, evs) => this.folded(ls, evs),
        (e) => this.log.warn(`events of ${id}: ${String(e)}`),
      ),
    );
    this.sessions.set(id, x);
    await x.live.start();
    return x;
  }

  /** The follower of a session, if this process has one (no log is read). */
  followed(id: string): LiveSession | undefined {
    return this.sessions.get(id)?.live;
  }

  /** The session object, if this process follows the session (no log is read). */
  session(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Every session this process follows. */
  all(): IterableIterator<Session> {
    return this.sessions.values();
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
    await appendEvent(this.paths(id).eventsPath, ev);
    await this.sessions.get(id)?.live.refresh();
  }

  private folded(s: LiveSession, events: LogEvent[]): void {
    this.persist(s.id);
    this.onEvents(s, events);
    const x = this.sessions.get(s.id);
    if (x?.live !== s) return;
    if (!isLive(s.fold.status)) this.scheduleRelease(x);
    else if (!events.some((e) => e.hook_event_name === "cs:snapshot")) this.maybeCompact(x);
  }

  private scheduleRelease(x: Session): void {
    const s = x.live;
    this.cancelRelease(x.id);
    const t = setTimeout(() => {
      x.release = undefined;
      if (this.sessions.get(s.id) !== x || isLive(s.fold.status) || s.listenerCount > 0) return;
      // A kill under way still marks it (list_sessions): released after the kill.
      if (x.killing) return this.scheduleRelease(x);
      s.close();
      this.sessions.delete(s.id);
      this.onForget(s.id, x, false);
    }, this.releaseAfterMs);
    t.unref();
    x.release = t;
  }

  private cancelRelease(id: string): void {
    const x = this.sessions.get(id);
    if (x?.release) clearTimeout(x.release);
    if (x) x.release = undefined;
  }

  /** Forgets a session (its record was deleted). */
  drop(id: string): void {
    const x = this.sessions.get(id);
    this.cancelRelease(id);
    x?.live.close();
    this.sessions.delete(id);
    this.onForget(id, x, true);
  }

  /** How many sessions this process follows (for tests and health). */
  get size(): number {
    return this.sessions.size;
  }

  /** Sessions waiting for the next status write (tests: the queue empties). */
  get pendingWrites(): number {
    return this.dirty.size;
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
                const s = this.sessions.get(i)?.live;
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
    for (const x of this.sessions.values()) this.cancelRelease(x.id);
    await Promise.all([...this.sessions.values()].map((x) => x.live.refresh()));
    await this.flushed();
    for (const x of this.sessions.values()) x.live.close();
    this.sessions.clear();
  }
}

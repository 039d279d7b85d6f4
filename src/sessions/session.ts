/**
 * One session this server follows, and everything the server keeps of it in memory: its follower (fold, log tail,
 * waiters), the release of that follower after the session's end, the flags of the work under way on it
 * (compacting its log, a kill), the status and turn count last seen by the change feed, its deadlines
 * (MAX_SESSION_DURATION and the time limits), the cost ledger's turns, the context-sync snapshot, the screen watch, and a wake under way.
 * Made in one place (Registry.follow) and dropped in one place (the registry releases or drops it, then
 * SessionService.forget disposes of it): a server keeps nothing of a session it no longer follows, because there
 * is no other map to forget it in. Server-wide things (listeners, the warm pool's keys, the room queue) are not here.
 */
import type { Status } from "../core/status.js";
import type { LiveSession } from "../events/live.js";
import type { Snapshot } from "./teams/context-sync.js";
import type { Begun, CostFields } from "./spend/cost.js";
import { Deadline } from "./deadline.js";
import type { Woke } from "./launch/wake.js";

/** The cost ledger's part of a session (cost.ts): turns under way and being settled. */
export interface TurnLedger {
  /** Prompts delivered and not yet settled (a queued prompt is delivered during a turn). */
  begun: Begun[];
  /** Settlements by turn number (the last few), so the turn's end and the send's result share one. */
  readonly settling: Map<number, Promise<CostFields>>;
  /** Figures read but not yet in the store (list_sessions waits for these: a few milliseconds). */
  recording?: Promise<void> | undefined;
  /** The last settlement, recorded in the store: the next one starts after it. */
  chain?: Promise<unknown> | undefined;
}

/**
 * Its one-shot deadlines: MAX_SESSION_DURATION (armed by launch/spawn.ts), and the time limits armed by the change feed
 * while it is idle or busy (limits.ts: idle TTL, busy limit, hibernation). Retention is not here: it is armed for
 * records no one follows.
 */
export type DeadlineName = "duration" | "idle" | "busy" | "hibernate";

/** The screen watch's part of a session (screen-watch.ts). */
export interface ScreenState {
  timer?: NodeJS.Timeout | undefined;
  /** When the last batch of its events was folded (Date.now()). */
  lastEvent?: number | undefined;
  /** A probe is under way. */
  looking: boolean;
}

export class Session {
  /** The registry's release of this follower, armed once the session has ended. */
  release: NodeJS.Timeout | undefined;
  /** Its events log is being compacted (never two at once). */
  compacting = false;
  /** kill_session is ending it now: an end already folded is the kill's, not a zombie (list_sessions). */
  killing = false;
  /** The status and turn count the change feed saw at the last batch (undefined before the first). */
  lastStatus: Status | undefined;
  lastTurns: number | undefined;
  private readonly deadlines = new Map<DeadlineName, Deadline>();
  readonly ledger: TurnLedger = { begun: [], settling: new Map() };
  /** What sync_context last told it (context-sync.ts). */
  synced: Snapshot | undefined;
  readonly screen: ScreenState = { looking: false };
  /** Prompts held for it with `queue: true` until its turn ends (queue.ts). */
  held = 0;
  /** Its transcript is being read for the budget while it is busy (budget-watch.ts). */
  budgetWatch = false;
  /** A wake from hibernation under way: a second call shares it (hibernate.ts). */
  wake: Promise<Woke | undefined> | undefined;

  constructor(readonly live: LiveSession) {}

  get id(): string {
    return this.live.id;
  }

  /** Runs `fn` in `ms` (replacing the deadline of that name armed before). */
  armDeadline(ms: number, fn: () => void, name: DeadlineName = "duration"): void {
    this.clearDeadline(name);
    let fired = false;
    let t: Deadline | undefined;
    t = new Deadline(ms, () => {
      fired = true;
      if (this.deadlines.get(name) === t) this.deadlines.delete(name);
      fn();
    });
    // A deadline already due fires inside the constructor (before `t` is kept): nothing is kept then.
    if (!fired) this.deadlines.set(name, t);
  }

  hasDeadline(name: DeadlineName): boolean {
    return this.deadlines.has(name);
  }

  clearDeadline(name: DeadlineName = "duration"): void {
    this.deadlines.get(name)?.cancel();
    this.deadlines.delete(name);
  }

  clearDeadlines(): void {
    for (const t of this.deadlines.values()) t.cancel();
    this.deadlines.clear();
  }

  /** Deadlines armed now (health: the time limits armed). */
  get armed(): number {
    return this.deadlines.size;
  }

  /** Timers it holds now (release, deadlines, screen watch): none once it is disposed (tests). */
  get timers(): number {
    return Number(this.release !== undefined) + this.deadlines.size + Number(this.screen.timer !== undefined);
  }

  clearScreenWatch(): void {
    if (this.screen.timer) clearInterval(this.screen.timer);
    this.screen.timer = undefined;
    this.screen.lastEvent = undefined;
  }

  /** The server no longer follows it: its timers stop (what is under way finishes and is kept nowhere). */
  dispose(): void {
    if (this.release) clearTimeout(this.release);
    this.release = undefined;
    this.clearDeadlines();
    this.clearScreenWatch();
  }
}

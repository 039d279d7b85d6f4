/**
 * The session layer's one door: every tool and CLI command calls these methods, typed with the tool schemas'
 * types (src/api). Each method is a few lines that hand the call to the module doing that job.
 */
import type * as api from "../api/index.js";
import type { ScriptPaths } from "../claude/scripts.js";
import type { Config } from "../config.js";
import type { CallContext } from "../core/context.js";
import { SessionError } from "../core/errors.js";
import type { BackendKind } from "../core/events.js";
import { isLive, type Status } from "../core/status.js";
import type { LiveSession } from "../events/live.js";
import type { Folded, LogEvent } from "../events/reducer.js";
import { AuditLog } from "../store/audit.js";
import type { Store } from "../store/store.js";
import type { Logger } from "../util/log.js";
import type { HistoryService } from "../history/service.js";
import { adopt, Reconciler } from "./launch/adopt.js";
import { sessionTotals } from "./spend/budget.js";
import { Ledger, recordUnended, settled, settleTurn } from "./spend/cost.js";
import type { Totals } from "./spend/totals.js";
import type { Deps, Runner, TurnUsage } from "./deps.js";
import { allRunners } from "./deps.js";
import { kill } from "./life/kill.js";
import { start, type StartExtra } from "./launch/launch.js";
import { startPooled } from "./launch/warm-pool.js";
import { resume } from "./launch/resume.js";
import { compact, reset } from "./turn/reset.js";
import { Limits, type LimitKind } from "./life/limits.js";
import { ScreenWatch } from "./life/screen-watch.js";
import { BudgetWatch } from "./life/budget-watch.js";
import { LimitPark } from "./limit/park.js";
import { serverAction } from "./audit.js";
import { list } from "./list.js";
import { sendNative } from "./native.js";
import { stream } from "./output.js";
import { Registry } from "./registry.js";
import type { Session } from "./session.js";
import { answerPrompt, interrupt, respondPermission } from "./turn/control.js";
import { wait } from "./turn/turns.js";
import { broadcast, waitMany } from "./teams/group.js";
import { sendWithContext, syncContext } from "./teams/sync.js";
import { resolved } from "./teams/team.js";
import { assertRemovable, removeWorktree } from "./launch/worktree.js";
import { runTask } from "./run-task.js";
import { fanOut } from "./attempts/fan-out.js";
import { mergeWorktree } from "./attempts/merge.js";
import { Radar, type OverlapNotice } from "./attempts/radar.js";
import { withRoom } from "./life/room.js";
import { transfer } from "./move/transfer.js";
import { hibernateAtShutdown, hibernateCall, hibernationSettled } from "./life/sleep.js";

export interface ServiceOptions {
  cfg: Config;
  store: Store;
  log: Logger;
  scripts: ScriptPaths;
  runners: Partial<Record<BackendKind, Runner>>;
  unavailable?: Partial<Record<BackendKind, SessionError>>;
  /** The transcript index and execution history (the history tools; turns are recorded in it). */
  history?: HistoryService;
  /** How long after its end a session's follower is released (tests shorten it). */
  releaseAfterMs?: number;
  /** How long folded changes are gathered before one write to state.json (tests shorten it). */
  persistGatherMs?: number;
  /** How long a turn without a reply line waits for its transcript to be still (tests shorten it). */
  settleQuietMs?: number;
  /** How often a quiet turn's screen is looked at for a prompt that blocks it, and after how long quiet (tests shorten them). */
  screenProbeMs?: number;
  screenQuietMs?: number;
}

/** What changed in a session this server follows: the events of one batch and the fold after them. */
export interface SessionChange {
  session_id: string;
  /** The status before this batch (undefined the first time this process folds the session). */
  previous?: Status;
  status: Status;
  events: readonly LogEvent[];
  fold: Readonly<Folded>;
}

export type ChangeListener = (c: SessionChange) => void;

/** A session's totals (as list_sessions shows them) after a turn's usage was read and recorded. */
export type TotalsListener = (id: string, totals: Totals) => void;

/** A session the server no longer follows; `removed` when its record was deleted. */
export type ForgetListener = (id: string, removed: boolean) => void;

/** A turn's usage is read this long after its end, unless a caller asks for it sooner. */
const SETTLE_AFTER_MS = 100;

export class SessionService {
  private readonly d: Deps;
  private readonly reconciler: Reconciler;
  private readonly listeners = new Set<ChangeListener>();
  private closed = false;
  private readonly limits: Limits;
  private readonly screens: ScreenWatch;
  private readonly budgets: BudgetWatch;
  private readonly parked: LimitPark;
  private readonly limitListeners = new Set<(id: string, kind: LimitKind, detail: string) => void>();
  private readonly totalsListeners = new Set<TotalsListener>();
  private readonly forgetListeners = new Set<ForgetListener>();
  private readonly usageListeners = new Set<(id: string, u: TurnUsage) => void>();
  /** The conflict radar (issue 34): two live sessions of one repository editing the same file. */
  private readonly radar: Radar;

  constructor(o: ServiceOptions) {
    const registry = new Registry(
      o.cfg.stateDir,
      o.store,
      o.log,
      (s, evs) => this.onEvents(s, evs),
      o.releaseAfterMs,
      o.cfg.eventsMaxBytes,
      o.persistGatherMs,
    );
    const kinds = Object.keys(o.runners) as BackendKind[];
    this.d = {
      cfg: o.cfg,
      store: o.store,
      log: o.log,
      scripts: o.scripts,
      registry,
      runners: o.runners,
      unavailable: o.unavailable ?? {},
      defaultKind: o.cfg.defaultBackend ?? (o.runners.tmux ? "tmux" : (kinds[0] ?? "tmux")),
      resuming: new Map(),
      endReasons: new Map(),
      ledger: new Ledger(o.settleQuietMs),
      audit: new AuditLog(o.cfg.stateDir, o.cfg.auditMaxBytes, o.log),
      history: o.history,
      onTurnUsage: (id, u) => {
        for (const l of [...this.usageListeners]) l(id, u);
      },
    };
    registry.onForget = (id, s, removed) => this.forget(id, s, removed);
    this.reconciler = new Reconciler(this.d);
    this.screens = new ScreenWatch(this.d, o.screenProbeMs, o.screenQuietMs);
    this.budgets = new BudgetWatch(this.d);
    this.radar = new Radar(this.d);
    this.parked = new LimitPark(
      this.d,
      (id, message) =>
        serverAction(this.d, "usage_limit", "send_message", id, () =>
          this.send(
            {
              session_id: id,
              message,
              wait_for_response: false,
              wait_for_usage: false,
              timeout_ms: 30_000,
              queue: false,
              bash_mode: false,
              include_context: false,
            },
            { actor: "server:usage_limit" },
          ),
        ),
      (id, account, message) =>
        serverAction(this.d, "usage_limit", "resume_session", id, () =>
          this.resume(
            { session_id: id, account, ...(message !== undefined ? { message } : {}) },
            { actor: "server:usage_limit" },
          ),
        ),
    );
    this.limits = new Limits(this.d, (id, kind, detail) => {
      for (const l of [...this.limitListeners]) l(id, kind, detail);
    });
  }

  /**
   * Calls `l` after every batch of events of every session this server follows (hooks, and the server's own
   * events): the seam for notifications, resources and live views. Driven by the event logs, never a timer.
   */
  subscribe(l: ChangeListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  /** Listeners registered right now (subscribe, onLimit): health_check shows them over HTTP, so a leak is visible. */
  get listenerCounts(): { changes: number; limits: number; totals: number; forgets: number } {
    return {
      changes: this.listeners.size,
      limits: this.limitListeners.size,
      totals: this.totalsListeners.size,
      forgets: this.forgetListeners.size,
    };
  }
  /** Calls `l` with a session's totals each time a turn's usage has been recorded (the web list's cost column). */
  onTotals(l: TotalsListener): () => void {
    this.totalsListeners.add(l);
    return () => this.totalsListeners.delete(l);
  }

  private async totalsChanged(id: string): Promise<void> {
    if (!this.totalsListeners.size || this.closed) return;
    await settled(this.d, id);
    const r = await this.d.store.get(id);
    if (!r) return;
    const t = sessionTotals(r);
    for (const l of [...this.totalsListeners]) {
      try {
        l(id, t);
      } catch (e) {
        this.d.log.warn(`a totals listener failed: ${String(e)}`);
      }
    }
  }

  private onEvents(s: LiveSession, events: LogEvent[]): void {
    for (const e of events) this.d.log.debug(`${s.id} ${e.hook_event_name}`);
    const x = this.d.registry.session(s.id);
    const previous = x?.lastStatus;
    // Kept while the session is followed (a late refresh of a released follower keeps nothing: forget() ran).
    const followed = x?.live === s;
    if (followed) x.lastStatus = s.fold.status;
    this.radar.observe(s.id, events);
    if (this.listeners.size) {
      const change: SessionChange = {
        session_id: s.id,
        status: s.fold.status,
        events,
        fold: s.fold,
        ...(previous ? { previous } : {}),
      };
      for (const l of [...this.listeners]) {
        try {
          l(change);
        } catch (e) {
          this.d.log.warn(`a session change listener failed: ${String(e)}`);
        }
      }
    }
    // A turn ended: its usage, cost and execution record (once per process; a send's result shares it).
    const turns = x?.lastTurns;
    if (followed) x.lastTurns = s.fold.turn_count;
    // Off the hot path: the waiter of this very turn end is answered first, and the transcript's reply line lands
    // 25–80 ms after Stop anyway (send_message asks for the same settlement at once and shares it).
    if (turns !== undefined && s.fold.turn_count > turns) {
      const turn = s.fold.turn_count;
      const fold = s.fold;
      const id = s.id;
      const after = () =>
        this.totalsChanged(id).catch((e: unknown) => this.d.log.warn(`${id}: reading the totals: ${String(e)}`));
      setTimeout(() => void settleTurn(this.d, id, turn, fold).then(after), SETTLE_AFTER_MS).unref();
    }
    // The process ended with a turn under way: that turn is recorded as died (once: the status leaves live once).
    if (previous && isLive(previous) && !isLive(s.fold.status) && s.fold.prompts_submitted > s.fold.turn_count) {
      const why =
        this.d.endReasons.get(s.id) ??
        s.fold.last_error ??
        (typeof s.fold.exit_code === "number" ? `the process exited with code ${s.fold.exit_code}` : "the process ended");
      recordUnended(this.d, s.id, s.fold, s.fold.turn_count + 1, "died", `the process ended mid-turn: ${why}`);
    }
    if (!isLive(s.fold.status)) x?.clearDeadline();
    if (!this.closed)
      this.limits.changed(
        { session_id: s.id, status: s.fold.status, ...(previous ? { previous } : {}) },
        followed ? x : undefined,
      );
    if (!this.closed && x) this.screens.changed(x, s.fold.status);
    if (!this.closed && x) this.budgets.changed(x);
    if (!this.closed && followed) this.parked.changed(x);
    // An exit recorded without its status: the backend may still find it out (tmux 3.3).
    // (Not for a hibernated session: its process's end is expected and says nothing.)
    if (s.fold.status !== "hibernated" && events.some((e) => e.hook_event_name === "cs:exit" && typeof e.exit_code !== "number"))
      void this.settleExit(s, s.fold.generation);
  }

  /** The exit status of the process of `generation`, found later: never applied to a newer process (a wake, a resume). */
  private async settleExit(s: LiveSession, generation: number | undefined): Promise<void> {
    const r = await this.d.store.get(s.id);
    const b = r ? this.d.runners[r.backend]?.host : undefined;
    const code = await b?.settleExit?.(s.id).catch(() => undefined);
    if (this.closed || code === undefined || typeof s.fold.exit_code === "number" || s.fold.generation !== generation) return;
    await this.d.registry
      .emit(s.id, { hook_event_name: "cs:exit", exit_code: code, ...(generation !== undefined ? { generation } : {}) })
      .catch(() => {});
  }

  /** `extra`: what only the server sets (a teammate's budget pool: member tools); such a start takes no spare. */
  start(input: api.StartInput, ctx: CallContext = {}, extra: StartExtra = {}): Promise<api.StartOutput> {
    if (extra.budgetPool !== undefined) return withRoom(this.d, undefined, () => start(this.d, input, ctx, extra));
    return withRoom(this.d, undefined, () => startPooled(this.d, input, ctx));
  }
  // Every call that names one session may name it by team_name + teammate_name: resolved here, once (team.ts).
  async resume(input: api.ResumeInput, ctx: CallContext = {}): Promise<api.ResumeOutput> {
    const r = input.team_name !== undefined || input.teammate_name !== undefined ? await resolved(this.d, input) : input;
    if (r.session_id !== undefined) await hibernationSettled(this.d, r.session_id, ctx);
    return withRoom(this.d, r.session_id, () => resume(this.d, r, ctx));
  }
  async send(input: api.SendInput, ctx: CallContext = {}): Promise<api.SendOutput> {
    // Claude Code's own background sessions are addressed apart from this server's (native.ts).
    if (input.native_session_id !== undefined)
      return sendNative(this.d, { ...input, native_session_id: input.native_session_id }, ctx);
    return sendWithContext(this.d, await resolved(this.d, input), ctx);
  }
  async wait(input: api.WaitInput, ctx: CallContext = {}): Promise<api.WaitOutput> {
    return wait(this.d, await resolved(this.d, input), ctx);
  }
  async respondPermission(input: api.RespondInput, ctx: CallContext = {}): Promise<api.RespondOutput> {
    return respondPermission(this.d, await resolved(this.d, input), ctx);
  }
  async answerPrompt(input: api.AnswerPromptInput, ctx: CallContext = {}): Promise<api.AnswerPromptOutput> {
    return answerPrompt(this.d, await resolved(this.d, input), ctx);
  }
  async interrupt(input: api.InterruptInput, ctx: CallContext = {}): Promise<api.InterruptOutput> {
    return interrupt(this.d, await resolved(this.d, input), ctx);
  }
  runTask(input: api.RunTaskInput, ctx: CallContext = {}): Promise<api.RunTaskOutput> {
    return withRoom(this.d, undefined, () => runTask(this.d, input, ctx));
  }
  /** fan_out (issue 34): one prompt, n sessions in worktrees, checked and ranked (sessions/attempts/). */
  fanOut(input: api.FanOutInput, ctx: CallContext = {}): Promise<api.FanOutOutput> {
    const taskBackend = allRunners(this.d).find((r) => r.caps.taskDefault)?.kind ?? this.d.defaultKind;
    return fanOut(
      this.d.cfg,
      { start: (i, c) => this.start(i, c), wait: (i, c) => this.wait(i, c), kill: (i) => this.kill(i), taskBackend },
      input,
      ctx,
    );
  }
  /** merge_worktree (issue 34): a session's worktree into a branch, through the merge queue (sessions/attempts/). */
  async mergeWorktree(input: api.MergeInput, ctx: CallContext = {}): Promise<api.MergeOutput> {
    const r = await this.d.registry.record(input.session_id);
    return mergeWorktree(
      this.d.cfg,
      { record: r, status: this.d.registry.followed(r.session_id)?.fold.status ?? r.status },
      input,
      ctx,
    );
  }
  async reset(input: api.ResetInput, ctx: CallContext = {}): Promise<api.ResetOutput> {
    return reset(this.d, await resolved(this.d, input), ctx);
  }
  async compact(input: api.CompactInput, ctx: CallContext = {}): Promise<api.CompactOutput> {
    return compact(this.d, await resolved(this.d, input), ctx);
  }
  async kill(input: api.KillInput): Promise<api.KillOutput> {
    const k = await resolved(this.d, input);
    if (k.hibernate) return hibernateCall(this.d, k);
    const r = k.remove_worktree ? await this.d.store.get(k.session_id) : undefined;
    // A worktree with changes is refused before anything is ended.
    if (r) await assertRemovable(r, k.force === true);
    const out = await kill(this.d, k);
    if (r?.worktree) {
      await removeWorktree(r.worktree, { force: k.force === true });
      out.worktree_removed = true;
      // The record (kept for resume) no longer names a tree that is gone.
      if (out.state_saved) await this.d.store.patch(k.session_id, (rec) => void delete rec.worktree);
    }
    return out;
  }
  broadcast(input: api.BroadcastInput, ctx: CallContext = {}): Promise<api.BroadcastOutput> {
    return broadcast(this.d, input, ctx);
  }
  waitMany(input: api.WaitManyInput, ctx: CallContext = {}): Promise<api.WaitManyOutput> {
    return waitMany(this.d, input, ctx);
  }
  /** A step of a move between machines (move/transfer.ts; a coordinator's move_session calls it on each side). */
  transfer(input: api.TransferInput): Promise<api.TransferOutput> {
    return transfer(this.d, input);
  }
  syncContext(input: api.SyncInput, ctx: CallContext = {}): Promise<api.SyncOutput> {
    return syncContext(this.d, input, ctx);
  }
  list(input: api.ListInput): Promise<api.ListOutput> {
    return list(this.d, this.reconciler, input, (id) => this.radar.overlapsOf(id));
  }
  async stream(input: api.StreamInput, ctx: CallContext = {}): Promise<api.StreamOutput> {
    return stream(this.d, await resolved(this.d, input), ctx);
  }
  /**
   * Adopts live sessions left by an earlier server and marks the vanished ones dead, or hibernated (a pty or headless
   * session with a conversation whose server was killed) (at start-up).
   */
  async adopt(): Promise<{ adopted: string[]; dead: string[]; hibernated: string[] }> {
    const res = await adopt(this.d);
    await this.limits.scanDead().catch((e: unknown) => this.d.log.warn(`arming retention: ${String(e)}`));
    return res;
  }
  /** Calls `l` when the usage of a turn whose send_message returned without it (usage_pending) has been read. */
  onTurnUsage(l: (id: string, u: TurnUsage) => void): () => void {
    this.usageListeners.add(l);
    return () => this.usageListeners.delete(l);
  }
  /** Calls `l` when a time limit acts on a session (idle end, busy interrupt, pruned record). */
  onLimit(l: (id: string, kind: LimitKind, detail: string) => void): () => void {
    this.limitListeners.add(l);
    return () => this.limitListeners.delete(l);
  }
  /** Switches whether new sessions may use bypassPermissions (the configure tool, when the operator allows it). */
  setAllowBypass(allow: boolean): boolean {
    const changed = this.d.cfg.allowBypassPermissions !== allow;
    this.d.cfg.allowBypassPermissions = allow;
    return changed;
  }
  /** Time-limit deadlines armed right now. */
  get armedLimits(): number {
    return this.limits.armed;
  }
  /** The audit log every transport's state-changing calls are written to (server/call.ts), one per process. */
  get audit(): AuditLog {
    return this.d.audit;
  }
  /** The dependencies, for modules of the layers above that add tools over the same sessions (read-only use). */
  get deps(): Readonly<Deps> {
    return this.d;
  }
  /** The history tools' service (conversations in the transcripts, the execution history). */
  get history(): HistoryService {
    if (this.d.history) return this.d.history;
    throw new SessionError("INTERNAL", "this server was started without the conversation history.", {
      suggestion: "Run the server through claude-sessions serve.",
    });
  }
  /** Sessions this process follows right now (released once they end). */
  get followed(): number {
    return this.d.registry.size;
  }

  /**
   * The one place what is kept per session is forgotten, once the server no longer follows it (released after
   * its end, or dropped): the session object (session.ts: statuses seen, the cost ledger, the context-sync
   * snapshot, the screen watch, the duration deadline, a wake) stops its timers and is kept nowhere any more; the
   * runners forget what their drivers and hosts keep of it (results, engines).
   */
  private forget(id: string, s: Session | undefined, removed: boolean): void {
    s?.dispose();
    this.radar.forget(id);
    for (const r of Object.values(this.d.runners)) {
      r.driver.forget?.(id);
      r.host.forget?.(id);
    }
    for (const l of [...this.forgetListeners]) {
      try {
        l(id, removed);
      } catch (e) {
        this.d.log.warn(`a forget listener failed: ${String(e)}`);
      }
    }
  }

  /**
   * Calls `l` when the server forgets a session (its follower released after its end, or dropped): the layers
   * above let go of what they keep of it. `removed`: its record was deleted (kill without save_state, retention).
   */
  /** Calls `l` when two live sessions of one repository have edited the same file (once per session and edit). */
  onOverlap(l: (n: OverlapNotice) => void): () => void {
    return this.radar.onOverlap(l);
  }
  /** A live session's overlaps now (as list_sessions shows them). */
  overlapsOf(id: string): Array<{ session_id: string; file: string }> {
    return this.radar.overlapsOf(id);
  }
  onForget(l: ForgetListener): () => void {
    this.forgetListeners.add(l);
    return () => this.forgetListeners.delete(l);
  }

  /**
   * Entries kept per session, by map (tests: a server that started and ended sessions keeps nothing of them): the
   * session objects, and the few server-wide maps keyed by session: status writes queued, resumes under way, the
   * reasons of ends a limit chose (kept past the follower, for a later wait), spares starting, the runners' own.
   */
  get footprint(): Record<string, number> {
    const drivers = Object.fromEntries(
      Object.values(this.d.runners).flatMap((r) => [
        [`driver:${r.kind}`, r.driver.kept ?? 0],
        [`host:${r.kind}`, r.host.kept ?? 0],
      ]),
    );
    return {
      sessions: this.d.registry.size,
      pendingWrites: this.d.registry.pendingWrites,
      resuming: this.d.resuming.size,
      endReasons: this.d.endReasons.size,
      pool: this.d.pool?.spares ?? 0,
      ...drivers,
    };
  }

  /** Server shutdown: these sessions (whose processes end with it) become hibernated; returns the ones that did. */
  hibernateAtShutdown(ids: string[]): Promise<string[]> {
    return hibernateAtShutdown(this.d, ids);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.d.registry.all()) s.clearDeadlines();
    this.limits.clearAll();
    this.screens.clearAll();
    this.budgets.close();
    this.parked.close();
    await this.d.registry.close();
    await this.d.audit.flushed();
  }
}

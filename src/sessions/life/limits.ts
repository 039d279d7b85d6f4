/**
 * The time limits of issue #14, each one timer per deadline, armed and cleared by the change feed, so
 * an idle server sleeps: CLAUDE_SESSIONS_IDLE_TTL_MS ends a session that stayed idle (gracefully, resumable),
 * CLAUDE_SESSIONS_BUSY_MAX_MS interrupts a turn busy too long (and flags it in the record's error log), and
 * CLAUDE_SESSIONS_RETAIN_DEAD_MS prunes records of sessions dead longer than that, with their directories under
 * the state directory (Claude's own transcripts are never touched). Issue #23: CLAUDE_SESSIONS_HIBERNATE_AFTER_MS
 * hibernates a session idle that long (sleep.ts), one Deadline each likewise. The idle, busy and hibernation
 * deadlines are the session object's (session.ts: a followed session's, dropped with it); retention's are kept here,
 * by id, because they are armed for records no one follows (scanDead at start-up). MAX_SESSION_DURATION is armed
 * here too (armDeadline, when a launch or an adoption has the process up).
 */
import { rm } from "node:fs/promises";
import type { Status } from "../../core/status.js";
import type { SessionRecord } from "../../store/schema.js";
import { serverAction } from "../audit.js";
import { Deadlines, timeLeftMs } from "../deadline.js";
import type { Deps } from "../deps.js";
import { hibernate } from "./sleep.js";
import type { Session } from "../session.js";
import { kill } from "./kill.js";
import { interrupt } from "../turn/control.js";

export interface LimitChange {
  session_id: string;
  previous?: Status;
  status: Status;
}

/** Why a limit acted, as the flag in the record and the notification say it. */
export type LimitKind = "idle_ttl" | "busy_max" | "retention" | "hibernate";

/** Records retention may remove: ended (dead) or failed to start (error). A zombie still has a process. */
function prunable(s: Status): boolean {
  return s === "dead" || s === "error";
}

export class Limits {
  private readonly retain = new Deadlines();

  constructor(
    private readonly d: Deps,
    private readonly onLimit: (id: string, kind: LimitKind, detail: string) => void = () => {},
  ) {}

  /**
   * Called for every batch of a session's events: arms or clears its deadlines by its new status (on `x`, its
   * object, when the server follows it; a late batch of a released follower arms nothing).
   */
  changed(c: LimitChange, x: Session | undefined): void {
    const { session_id: id, status } = c;
    const cfg = this.d.cfg;
    if (status === "starting") this.d.endReasons.delete(id);
    if (x) {
      if ((status === "idle" || status === "ready") && cfg.idleTtlMs > 0) {
        if (c.previous !== status || !x.hasDeadline("idle"))
          x.armDeadline(cfg.idleTtlMs, () => void this.idleExpired(id), "idle");
      } else x.clearDeadline("idle");
      if ((status === "idle" || status === "ready") && cfg.hibernateAfterMs > 0) {
        if (c.previous !== status || !x.hasDeadline("hibernate"))
          x.armDeadline(cfg.hibernateAfterMs, () => void this.hibernateExpired(id), "hibernate");
      } else x.clearDeadline("hibernate");
      if (status === "busy" && cfg.busyMaxMs > 0) {
        if (c.previous !== "busy" || !x.hasDeadline("busy"))
          x.armDeadline(cfg.busyMaxMs, () => void this.busyExpired(id), "busy");
      } else if (status !== "busy") x.clearDeadline("busy");
    }
    if (prunable(status)) this.armRetention(id, Date.now());
    else this.retain.clear(id);
  }

  /** At start-up: a retention deadline for every dead record (counted from its end). */
  async scanDead(): Promise<void> {
    if (this.d.cfg.retainDeadMs <= 0) return;
    const st = await this.d.store.read();
    for (const r of Object.values(st.sessions)) {
      if (!prunable(r.status)) continue;
      const end = Date.parse(r.killed_at ?? r.last_active ?? r.created_at);
      this.armRetention(r.session_id, Number.isFinite(end) ? Math.min(end, Date.now()) : Date.now());
    }
  }

  private armRetention(id: string, endedAt: number): void {
    const ms = this.d.cfg.retainDeadMs;
    if (ms <= 0) return;
    this.retain.arm(id, Math.max(0, endedAt + ms - Date.now()), () => void this.prune(id));
  }

  private async idleExpired(id: string): Promise<void> {
    const s = this.d.registry.followed(id);
    if (!s || (s.fold.status !== "idle" && s.fold.status !== "ready")) return;
    const why = `idle for ${this.d.cfg.idleTtlMs} ms (CLAUDE_SESSIONS_IDLE_TTL_MS); resume_session brings it back`;
    this.d.log.info(`${id}: ${why}; ending it`);
    this.d.endReasons.set(id, why);
    this.onLimit(id, "idle_ttl", why);
    await serverAction(this.d, "idle_ttl", "kill_session", id, () =>
      kill(this.d, { session_id: id, force: false, save_state: true }, why),
    ).catch((e: unknown) => this.d.log.warn(`${id}: idle end failed: ${String(e)}`));
  }

  private async hibernateExpired(id: string): Promise<void> {
    const why = `idle for ${this.d.cfg.hibernateAfterMs} ms (CLAUDE_SESSIONS_HIBERNATE_AFTER_MS)`;
    const done = await serverAction(this.d, "hibernate_after", "kill_session", id, () => hibernate(this.d, id, why)).catch(
      (e: unknown) => {
        this.d.log.warn(`${id}: hibernating failed: ${String(e)}`);
        return false;
      },
    );
    if (done) this.onLimit(id, "hibernate", `hibernated: ${why}; the next prompt wakes it`);
  }

  private async busyExpired(id: string): Promise<void> {
    const s = this.d.registry.followed(id);
    if (!s || s.fold.status !== "busy") return;
    const why = `a turn was busy longer than ${this.d.cfg.busyMaxMs} ms (CLAUDE_SESSIONS_BUSY_MAX_MS) and was interrupted`;
    this.d.log.warn(`${id}: ${why}`);
    this.onLimit(id, "busy_max", why);
    await this.d.store.patch(id, (r) => {
      r.error_log = [...r.error_log, `${new Date().toISOString()} ${why}`].slice(-20);
    });
    await serverAction(this.d, "busy_limit", "interrupt_session", id, () =>
      interrupt(this.d, { session_id: id, timeout_ms: 5000 }, {}),
    ).catch((e: unknown) => this.d.log.warn(`${id}: interrupt after the busy limit failed: ${String(e)}`));
  }

  /** Removes a record dead longer than the retention and its directory under the state directory. */
  private async prune(id: string): Promise<void> {
    const cut = Date.now() - this.d.cfg.retainDeadMs;
    let pruned = false;
    await this.d.store.update((st) => {
      const r = Object.hasOwn(st.sessions, id) ? st.sessions[id] : undefined;
      if (!r || !prunable(r.status)) return;
      const end = Date.parse(r.killed_at ?? r.last_active ?? r.created_at);
      if (Number.isFinite(end) && end > cut + 1000) return; // ended again since (a resume, then a new end)
      delete st.sessions[id];
      pruned = true;
    });
    if (!pruned) return;
    await serverAction(this.d, "retention", "prune_session", id, async () => {
      this.d.registry.drop(id);
      this.d.endReasons.delete(id);
      await rm(this.d.registry.paths(id).dir, { recursive: true, force: true }).catch(() => {});
    });
    this.d.log.info(`${id}: pruned (dead longer than CLAUDE_SESSIONS_RETAIN_DEAD_MS)`);
    this.onLimit(id, "retention", "pruned");
  }

  /** Deadlines armed right now (health and the bench): the followed sessions' time limits and retention's. */
  get armed(): number {
    let n = this.retain.size;
    for (const x of this.d.registry.all()) n += x.armed - Number(x.hasDeadline("duration"));
    return n;
  }

  clearAll(): void {
    this.retain.clearAll();
    for (const x of this.d.registry.all()) for (const name of ["idle", "busy", "hibernate"] as const) x.clearDeadline(name);
  }
}

/** MAX_SESSION_DURATION, counted from the start of the current process (a resumed old session gets its full time). */
export function armDeadline(d: Deps, r: SessionRecord): void {
  // The session is followed here (launch and adoption follow it first): its deadline lives on its object.
  d.registry.session(r.session_id)?.armDeadline(timeLeftMs(r, d.cfg.maxSessionDurationMs), () => {
    d.log.info(`${r.session_id} reached MAX_SESSION_DURATION; ending it`);
    d.endReasons.set(
      r.session_id,
      `it reached MAX_SESSION_DURATION (${d.cfg.maxSessionDurationMs} ms); resume_session brings it back`,
    );
    void serverAction(d, "max_duration", "kill_session", r.session_id, () =>
      kill(d, { session_id: r.session_id, force: false, save_state: true }, "max_duration"),
    ).catch((e: unknown) => d.log.warn(String(e)));
  });
}

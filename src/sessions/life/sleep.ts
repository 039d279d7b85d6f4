/**
 * Hibernation (issue #23), the sleeping half: an idle session's process is ended cleanly and the record becomes
 * `hibernated` (a cs:hibernated event, so every server replays it); the conversation is kept. The next prompt
 * wakes it (launch/wake.ts: a wake is a relaunch, so it sits above launch); room.ts makes room under MAX_LIVE.
 */
import type { KillInput, KillOutput, Resolved } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { Deps } from "../deps.js";
import { generationOf } from "../registry.js";
import { withSessionKeys } from "../turn/keys.js";
import { applyFold } from "../views.js";

/**
 * A session that may be hibernated: idle, or ready (a fresh one that never took a prompt: its wake starts it again,
 * a new conversation with the same id and options). One waiting for a permission, blocked or busy never is.
 */
export function canHibernate(f: Pick<Folded, "status">): boolean {
  return f.status === "idle" || f.status === "ready";
}

/**
 * Ends a session's process and records it hibernated. Under the session's send lock (shared by every server), so
 * a prompt arriving meanwhile waits, then finds it hibernated and wakes it. False when the session was not
 * idle by then (nothing was changed).
 */
export async function hibernate(d: Deps, id: string, reason: string): Promise<boolean> {
  const s = await d.registry.handle(id);
  return withSessionKeys(d, id, 30_000, {}, async () => {
    await s.live.refresh();
    if (!canHibernate(s.live.fold)) return false;
    const r = await d.registry.record(id);
    // A warm-pool spare is no one's session: it is ended, never kept (makeRoom, the pool).
    if (r.spare !== undefined) return false;
    const b = d.runners[r.backend]?.host;
    // Only a process this server can reach (a pty of another server is that server's to hibernate).
    if (!b || !(await b.list()).get(id)?.alive) return false;
    d.log.info(`${id}: hibernating (${reason})`);
    // Recorded first: the process's own end (SessionEnd, its exit) then changes nothing, so the session never
    // looks dead on its way to hibernation.
    await d.registry.emit(id, { hook_event_name: "cs:hibernated", ...generationOf(s.live.fold) });
    const res = await b.kill(id, { graceMs: d.cfg.killGraceMs, ...(r.pid ? { pid: r.pid } : {}) });
    if (res.left?.length) d.log.warn(`${id}: processes of the session still running after hibernation: ${res.left.join(", ")}`);
    await b.remove(id).catch(() => {});
    d.registry.session(id)?.clearDeadline();
    await saveHibernated(d, id);
    return true;
  });
}

/** Writes a hibernated session's record from its fold. */
async function saveHibernated(d: Deps, id: string): Promise<void> {
  const s = await d.registry.follow(id);
  await d.registry.flushed();
  await d.store.patch(id, (rec) => {
    applyFold(rec, s.fold);
    rec.status = "hibernated";
    delete rec.killed_at;
    delete rec.pid;
  });
}

/** Appends cs:hibernated for a session whose process has ended (or is ending), and writes the record. */
export async function markHibernated(d: Deps, id: string): Promise<void> {
  const s = await d.registry.follow(id);
  await d.registry.emit(id, { hook_event_name: "cs:hibernated", ...generationOf(s.fold) });
  await saveHibernated(d, id);
}

/** Waits for a hibernation of `id` still ending its process (resume_session of a session being hibernated). */
export async function hibernationSettled(d: Deps, id: string, ctx: CallContext): Promise<void> {
  if (d.registry.followed(id)?.fold.status !== "hibernated") return;
  await withSessionKeys(d, id, 30_000, ctx, async () => {});
}

/** kill_session {hibernate: true}: an idle session is hibernated; any other is refused and left as it is. */
export async function hibernateCall(d: Deps, k: Resolved<KillInput>): Promise<KillOutput> {
  const r = await d.registry.record(k.session_id);
  const s = await d.registry.follow(r.session_id);
  const at = () => new Date().toISOString();
  if (s.fold.status === "hibernated")
    return { session_id: r.session_id, status: "hibernated", state_saved: true, killed_at: at() };
  if (!(await hibernate(d, r.session_id, "kill_session {hibernate: true}"))) {
    const st = s.fold.status;
    const why = canHibernate(s.fold)
      ? `is ${st} but not this server's to hibernate (a warm-pool spare, or a process another server runs)`
      : `is ${st}`;
    throw new SessionError(
      isLive(st) ? "SESSION_BUSY" : "SESSION_DEAD",
      `session ${r.session_id} ${why}; only an idle session can be hibernated.`,
      {
        suggestion: isLive(st)
          ? "Wait for the turn to end (wait_for_completion), or kill_session without hibernate."
          : "resume_session brings an ended session back.",
      },
    );
  }
  return { session_id: r.session_id, status: "hibernated", state_saved: true, killed_at: at() };
}

/**
 * At server shutdown: the sessions whose process ends with this server (pty, headless) are recorded hibernated
 * before their processes are ended, so the next server wakes them on the next prompt (one that never took a prompt
 * starts again, fresh). Starting sessions and warm-pool spares end as before. Returns the ones it marked.
 */
export async function hibernateAtShutdown(d: Deps, ids: string[]): Promise<string[]> {
  const out: string[] = [];
  await Promise.all(
    ids.map(async (id) => {
      const f = d.registry.followed(id)?.fold;
      if (!f || !isLive(f.status) || f.status === "starting") return;
      if ((await d.store.get(id))?.spare !== undefined) return;
      await markHibernated(d, id).then(
        () => out.push(id),
        (e: unknown) => d.log.warn(`${id}: hibernating at shutdown failed: ${String(e)}`),
      );
    }),
  );
  return out;
}

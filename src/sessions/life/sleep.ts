/**
 * Hibernation (issue #23): an idle session's process is ended cleanly and the record becomes `hibernated` (a
 * cs:hibernated event, so every server replays it); the conversation is kept, and the next prompt wakes it — the
 * same conversation resumed on its backend (resume.ts's relaunch, under its cross-process resume lock).
 */
import { join } from "node:path";
import { resumeInput, type KillInput, type KillOutput, type Resolved } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { isLive, type Status } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { SessionRecord } from "../../store/schema.js";
import { withFileLock } from "../../util/flock.js";
import { serverAction } from "../audit.js";
import type { Deps } from "../deps.js";
import { kill } from "./kill.js";
import { generationOf } from "../registry.js";
import { relaunch, type CarryOut } from "../launch/resume.js";
import { withSessionKeys } from "../turn/keys.js";
import { applyFold } from "../views.js";

/** A waking call's prompt, for the launch to carry (`out` says whether it did; then `onCarried` runs). */
export interface Carry {
  text: string;
  out: CarryOut;
  onCarried: () => void;
}

/** What a call that woke a session adds to its result. */
export interface Woke {
  woke: true;
  wake_ms: number;
}

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
    const b = d.runners[r.backend]?.backend;
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

/**
 * Wakes a hibernated session (undefined when it is not hibernated). Two calls in this process share one wake;
 * across servers the resume lock orders them and the later one finds it awake. A failed wake leaves the record
 * hibernated and is WAKE_FAILED with the cause.
 */
export async function wakeIfHibernated(d: Deps, id: string, ctx: CallContext, carry?: Carry): Promise<Woke | undefined> {
  // The wake under way is the session object's (session.ts).
  const x = await d.registry.open(id);
  const running = x.wake;
  if (running) return running;
  const s = x.live;
  await s.refresh();
  if (s.fold.status !== "hibernated") return undefined;
  // Only the call that wakes the session may have its prompt carried by the launch; a call joining it sends as usual,
  // after the carried turn: `onCarried` runs before the shared wake resolves, so it queues that turn first.
  const p = wake(d, id, ctx, carry).then((w) => {
    if (carry?.out.sent_at !== undefined) carry.onCarried();
    return w;
  });
  x.wake = p;
  try {
    return await p;
  } finally {
    if (x.wake === p) x.wake = undefined;
  }
}

/**
 * `carry`: the waking call's prompt travels with the launch when the runner can carry it (the CLI's argument on a
 * terminal, the SDK's input headless), as a start's does: no input box to wait for and no paste. `carry.out` says
 * whether it went (resume.ts's relaunch); when it did not, the caller sends it once the session is up.
 */
async function wake(d: Deps, id: string, ctx: CallContext, carry?: Carry): Promise<Woke | undefined> {
  const t0 = Date.now();
  const s = await d.registry.follow(id);
  const dir = d.registry.paths(id).dir;
  // The resume lock orders wakes (and resumes) across servers; the send lock waits for a hibernation still ending
  // the old process (it holds that lock from its cs:hibernated to the process's end) and keeps a new one from starting.
  const waitMs = d.cfg.startTimeoutMs * 2;
  const locked = (fn: () => Promise<boolean>) =>
    withFileLock(join(dir, "resume.lock"), () => withSessionKeys(d, id, waitMs, ctx, fn), { timeoutMs: waitMs, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  const woke = await withRoom(d, id, () =>
    locked(async () => {
      await s.refresh();
      if (s.fold.status !== "hibernated") return false; // another server woke it a moment ago
      const rec = await d.registry.record(id);
      try {
        // A wake is the session going on, not a start by this caller: the operator's roots bind it, a client's do not.
        await relaunch(d, rec, resumeInput.parse({ session_id: id }), carry?.text, {}, { ...ctx, roots: undefined }, carry ? carry.out : undefined);
      } catch (e) {
        await failedWake(d, id);
        const cause = e instanceof SessionError ? e : undefined;
        throw new SessionError("WAKE_FAILED", `session ${id} is hibernated and could not be woken: ${cause?.message ?? String(e)}`, {
          suggestion: "The record stays hibernated: look at stream_output (mode log) for what the process printed; kill_session ends it.",
          details: { cause: cause?.code ?? "INTERNAL" },
        });
      }
      return true;
    }),
  );
  if (!woke) {
    // Woken by another server: its process is starting; the prompt goes in once it takes prompts.
    await s.waitFor((f) => f.status !== "starting" && f.status !== "hibernated", { timeoutMs: d.cfg.startTimeoutMs, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    return undefined;
  }
  return { woke: true, wake_ms: Date.now() - t0 };
}

/** Waits for a hibernation of `id` still ending its process (resume_session of a session being hibernated). */
export async function hibernationSettled(d: Deps, id: string, ctx: CallContext): Promise<void> {
  if (d.registry.followed(id)?.fold.status !== "hibernated") return;
  await withSessionKeys(d, id, 30_000, ctx, async () => {});
}

/** A wake whose process did not come up: whatever is left of it ends, and the record is hibernated again. */
async function failedWake(d: Deps, id: string): Promise<void> {
  const s = await d.registry.follow(id);
  const r = await d.store.get(id);
  const b = r ? d.runners[r.backend]?.backend : undefined;
  if (b && (await b.list().catch(() => new Map())).get(id)?.alive) await b.kill(id, { graceMs: 500 }).catch(() => {});
  await b?.remove(id).catch(() => {});
  if (isLive(s.fold.status)) await d.registry.emit(id, { hook_event_name: "cs:exit", ...generationOf(s.fold) });
  await markHibernated(d, id);
}

/** The status a session has now: this server's fold when it follows it, else the stored record's. */
function statusOf(d: Deps, id: string, stored: Status): Status {
  return d.registry.followed(id)?.fold.status ?? stored;
}

/** Per service: one room decision at a time, and the starts that were given room but may not be live yet. */
const rooms = new WeakMap<Deps, { turn: Promise<void>; reserved: number }>();

/**
 * CLAUDE_SESSIONS_MAX_LIVE: runs `fn` (a start, resume or wake) once there is room for one more live process:
 * while the live processes (and the starts given room and still under way) would pass the limit, the least
 * recently used idle session (not `except`) is hibernated. Room decisions are taken one at a time. Sessions in a
 * turn, at a permission request or blocked are never chosen; when none can go the start goes ahead over the limit
 * (logged), rather than fail a prompt.
 */
export async function withRoom<T>(d: Deps, except: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (d.cfg.maxLive <= 0) return fn();
  let r = rooms.get(d);
  if (!r) rooms.set(d, (r = { turn: Promise.resolve(), reserved: 0 }));
  const room = r;
  const before = room.turn;
  let done!: () => void;
  room.turn = new Promise<void>((res) => (done = res));
  try {
    await before;
    await makeRoom(d, except, room.reserved);
    room.reserved += 1;
  } finally {
    done();
  }
  try {
    return await fn();
  } finally {
    room.reserved -= 1;
  }
}

async function makeRoom(d: Deps, except: string | undefined, reserved: number): Promise<void> {
  const max = d.cfg.maxLive;
  const tried = new Set<string>();
  for (;;) {
    const live = (await liveRecords(d)).filter((r) => r.session_id !== except);
    if (live.length + reserved < max) return;
    // A warm-pool spare goes first: it holds no conversation, and a later start costs less than a wake.
    const spare = live.find((r) => r.spare !== undefined && !tried.has(r.session_id));
    if (spare) {
      tried.add(spare.session_id);
      const claimed = await d.store.update((s) => {
        const x = s.sessions[spare.session_id];
        if (x?.spare === undefined) return false;
        delete x.spare;
        return true;
      });
      if (claimed) {
        await serverAction(d, "max_live", "kill_session", spare.session_id, () => kill(d, { session_id: spare.session_id, save_state: false, force: false }, `CLAUDE_SESSIONS_MAX_LIVE (${max}) reached: a warm-pool spare made room`)).catch((e: unknown) => d.log.warn(`${spare.session_id}: ending a spare for room failed: ${String(e)}`));
      }
      continue;
    }
    const idle = live
      .filter((r) => !tried.has(r.session_id) && r.spare === undefined && d.runners[r.backend])
      .filter((r) => canHibernate(d.registry.followed(r.session_id)?.fold ?? r))
      .sort((a, b) => (a.last_active ?? a.created_at).localeCompare(b.last_active ?? b.created_at));
    const pick = idle[0];
    if (!pick) {
      d.log.warn(`${live.length} live sessions and CLAUDE_SESSIONS_MAX_LIVE is ${max}, but none is idle: starting over the limit`);
      return;
    }
    tried.add(pick.session_id);
    await serverAction(d, "max_live", "kill_session", pick.session_id, () => hibernate(d, pick.session_id, `CLAUDE_SESSIONS_MAX_LIVE (${max}) reached`)).catch((e: unknown) => d.log.warn(`${pick.session_id}: hibernating for room failed: ${String(e)}`));
  }
}

/**
 * Whether one more live process fits under CLAUDE_SESSIONS_MAX_LIVE without hibernating anything (always, when the
 * limit is off), counting `underWay` starts not yet recorded (conservatively: a recorded one counts twice): the warm
 * pool starts a spare only then — a spare never pushes a conversation out.
 */
export async function hasRoom(d: Deps, underWay = 0): Promise<boolean> {
  if (d.cfg.maxLive <= 0) return true;
  return (await liveRecords(d)).length + underWay + (rooms.get(d)?.reserved ?? 0) < d.cfg.maxLive;
}

/** The stored sessions whose process is live, by this server's fold where it follows them. */
async function liveRecords(d: Deps): Promise<SessionRecord[]> {
  return Object.values((await d.store.read()).sessions).filter((r) => isLive(statusOf(d, r.session_id, r.status)));
}

/** kill_session {hibernate: true}: an idle session is hibernated; any other is refused and left as it is. */
export async function hibernateCall(d: Deps, k: Resolved<KillInput>): Promise<KillOutput> {
  const r = await d.registry.record(k.session_id);
  const s = await d.registry.follow(r.session_id);
  const at = () => new Date().toISOString();
  if (s.fold.status === "hibernated") return { session_id: r.session_id, status: "hibernated", state_saved: true, killed_at: at() };
  if (!(await hibernate(d, r.session_id, "kill_session {hibernate: true}"))) {
    const st = s.fold.status;
    const why = canHibernate(s.fold) ? `is ${st} but not this server's to hibernate (a warm-pool spare, or a process another server runs)` : `is ${st}`;
    throw new SessionError(isLive(st) ? "SESSION_BUSY" : "SESSION_DEAD", `session ${r.session_id} ${why}; only an idle session can be hibernated.`, {
      suggestion: isLive(st) ? "Wait for the turn to end (wait_for_completion), or kill_session without hibernate." : "resume_session brings an ended session back.",
    });
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

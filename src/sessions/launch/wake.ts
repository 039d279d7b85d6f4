/**
 * Waking a hibernated session (issue #23): the same conversation resumed on its backend — resume.ts's relaunch,
 * under its cross-process resume lock, given room under MAX_LIVE (life/room.ts). A wake is a relaunch, so it sits
 * above launch; the sleeping half is life/sleep.ts.
 */
import { join } from "node:path";
import { resumeInput } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import { withFileLock } from "../../util/proc/flock.js";
import type { Deps } from "../deps.js";
import { withRoom } from "../life/room.js";
import { markHibernated } from "../life/sleep.js";
import { generationOf } from "../registry.js";
import { withSessionKeys } from "../turn/keys.js";
import { relaunch, type CarryOut } from "./resume.js";

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
    withFileLock(join(dir, "resume.lock"), () => withSessionKeys(d, id, waitMs, ctx, fn), {
      timeoutMs: waitMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  const woke = await withRoom(d, id, () =>
    locked(async () => {
      await s.refresh();
      if (s.fold.status !== "hibernated") return false; // another server woke it a moment ago
      const rec = await d.registry.record(id);
      try {
        // A wake is the session going on, not a start by this caller: the operator's roots bind it, a client's do not.
        await relaunch(
          d,
          rec,
          resumeInput.parse({ session_id: id }),
          carry?.text,
          {},
          { ...ctx, roots: undefined },
          carry ? carry.out : undefined,
        );
      } catch (e) {
        await failedWake(d, id);
        const cause = e instanceof SessionError ? e : undefined;
        throw new SessionError(
          "WAKE_FAILED",
          `session ${id} is hibernated and could not be woken: ${cause?.message ?? String(e)}`,
          {
            suggestion:
              "The record stays hibernated: look at stream_output (mode log) for what the process printed; kill_session ends it.",
            details: { cause: cause?.code ?? "INTERNAL" },
          },
        );
      }
      return true;
    }),
  );
  if (!woke) {
    // Woken by another server: its process is starting; the prompt goes in once it takes prompts.
    await s.waitFor((f) => f.status !== "starting" && f.status !== "hibernated", {
      timeoutMs: d.cfg.startTimeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return undefined;
  }
  return { woke: true, wake_ms: Date.now() - t0 };
}

/** A wake whose process did not come up: whatever is left of it ends, and the record is hibernated again. */
async function failedWake(d: Deps, id: string): Promise<void> {
  const s = await d.registry.follow(id);
  const r = await d.store.get(id);
  const b = r ? d.runners[r.backend]?.host : undefined;
  if (b && (await b.list().catch(() => new Map())).get(id)?.alive) await b.kill(id, { graceMs: 500 }).catch(() => {});
  await b?.remove(id).catch(() => {});
  if (isLive(s.fold.status)) await d.registry.emit(id, { hook_event_name: "cs:exit", ...generationOf(s.fold) });
  await markHibernated(d, id);
}

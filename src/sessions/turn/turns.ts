/**
 * A turn waited for: after a prompt went in (send.ts), or by wait_for_completion, on the fold until the turn ends, a
 * permission request opens, a screen blocks it or the process goes; its figures (the driver's, the transcript's) and
 * the session's totals, or a usage limit it hit (LIMITED). Answers and interrupts are control.ts.
 */
import type { Resolved, SendOutput, WaitInput, WaitOutput } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { limitOf } from "../../core/limit.js";
import type { BackendKind } from "../../core/events.js";
import { isLive } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { DriverSession, TurnFigures } from "../../runners/driver.js";
import { recordUnended, settled, settleTurn } from "../spend/cost.js";
import { sessionFields } from "../spend/totals.js";
import type { Deps } from "../deps.js";
import { publicBlocked, publicPending } from "../views.js";

const PROGRESS_EVERY_MS = 5000;
/** The value of `p` if it has already settled, else `{}`: no timer, no wait (a resolved promise wins the race first). */
function ifSettled<T extends object>(p: Promise<T>): Promise<T | Record<string, never>> {
  return Promise.race([p, Promise.resolve({})]);
}

type TurnResult = Omit<WaitOutput, "session_id">;

/**
 * After a delivery: the wait for prompt number `promptNo`'s turn, and its figures, into `out` (send_message's result;
 * run_task's, whose first prompt travelled with the launch). A wait that ends first (time-out, cancellation) is
 * recorded in the execution history; the turn gets its own record when it ends.
 */
export async function turnOutcome(
  d: Deps,
  id: string,
  kind: BackendKind,
  s: DriverSession,
  promptNo: number,
  out: SendOutput,
  timeoutMs: number,
  ctx: CallContext,
  t0: number,
  waitUsage = true,
): Promise<SendOutput> {
  let waited: TurnResult;
  try {
    waited = await waitTurn(d, s, promptNo, timeoutMs, ctx);
  } catch (e) {
    if (e instanceof SessionError && e.code === "CANCELLED")
      recordUnended(d, id, s.live.fold, promptNo, "cancelled", "the call was cancelled while the turn ran");
    throw e;
  }
  if (waited.timed_out)
    recordUnended(
      d,
      id,
      s.live.fold,
      promptNo,
      "timed_out",
      `send_message stopped waiting after ${timeoutMs} ms; the turn goes on`,
    );
  // Issue 38: the reply is returned at the turn's end; its usage (the transcript's line 25–80 ms later, a headless
  // turn's SDK result 15–230 ms later) follows in a notification (the next prompt to a session with a budget waits
  // for it: checkSpend). A failed turn (a tool error) carries its figures: no notification follows an error.
  const now = waitUsage || waited.turn_outcome === "failed";
  const w = await withFigures(d, kind, s, promptNo, waited, !now);
  // The turn ended on a usage limit: a typed result the caller can retry at resets_at, not a plain failure.
  if (w.completed && w.turn_outcome === "failed" && s.live.fold.limit) throw limitedError(d, id, s.live.fold.limit, true);
  const { last_response, ...rest } = w;
  Object.assign(out, rest, { waited_ms: Date.now() - t0 });
  if (w.completed) {
    if (last_response !== undefined) out.response = last_response;
    out.responded_at = new Date().toISOString();
  }
  // The transcript's figures fill what the driver did not give (a headless turn's own SDK figures come first).
  if (s.live.fold.turn_count >= promptNo) {
    const settling = settleTurn(d, id, promptNo, s.live.fold);
    const cost = now ? await settling : await ifSettled(settling);
    if (!now && !("usage" in cost) && !("usage" in out)) {
      out.usage_pending = true;
      void usageLater(d, kind, id, s, promptNo, settling);
      return out;
    }
    Object.assign(out, { ...cost, ...out });
    Object.assign(out, await totalsAfter(d, id, s));
  }
  return out;
}

/** The usage of a turn whose result went out without it: to the listeners (the `usage` notification) once read. */
async function usageLater(
  d: Deps,
  kind: BackendKind,
  id: string,
  s: DriverSession,
  turn: number,
  settling: ReturnType<typeof settleTurn>,
): Promise<void> {
  try {
    // A headless turn's own figures (the SDK's result) come first, as in a result that waited for them.
    const [cost, figures] = await Promise.all([settling, d.runners[kind]?.driver.turnFigures?.(s, turn)]);
    const totals = await totalsAfter(d, id, s);
    d.onTurnUsage?.(id, { turn, ...cost, ...usageOf(figures), ...totals });
  } catch (e) {
    d.log.warn(`${id}: the usage of turn ${turn}: ${String(e)}`);
  }
}

export async function wait(d: Deps, input: Resolved<WaitInput>, ctx: CallContext): Promise<WaitOutput> {
  await d.registry.record(input.session_id);
  const s = await d.registry.handle(input.session_id);
  // The turn that is running now (or the last one, if none is) is the one waited for. poll_interval_ms is
  // accepted for the design's clients and ignored: the wait wakes on hook events.
  const target = s.live.fold.prompts_submitted;
  const r = await d.registry.record(input.session_id);
  const out = await withFigures(
    d,
    r.backend,
    s,
    target,
    await waitTurn(d, s, target, input.timeout_ms ?? 300_000, ctx, { checkIdle: input.check_idle === true }),
  );
  if (!out.timed_out && s.live.fold.limit && (s.live.fold.status === "idle" || s.live.fold.status === "hibernated"))
    throw limitedError(d, input.session_id, s.live.fold.limit, undefined);
  // A wait returns at the turn's end (its detection is the point: milliseconds after the Stop hook). The usage is
  // added when it is already read (send_message waits for it); otherwise it is read in the background and the
  // execution history has it a moment later (the transcript's reply line lands 25–80 ms after Stop). A headless
  // turn's own figures (the SDK's) come first.
  const cost =
    target > 0 && s.live.fold.turn_count >= target ? await ifSettled(settleTurn(d, input.session_id, target, s.live.fold)) : {};
  // The session's totals come with the turn's figures (they include them); without those, they are left out.
  const totals = "usage" in cost ? await totalsAfter(d, input.session_id, s) : {};
  return {
    session_id: input.session_id,
    ...cost,
    ...totals,
    ...out,
    ...(out.completed ? { completed_at: new Date().toISOString() } : {}),
  };
}

/** LIMITED: the session's last turn hit a usage or rate limit; `sent` says whether this call's prompt went in. */
export function limitedError(d: Deps, id: string, l: NonNullable<Folded["limit"]>, sent: boolean | undefined): SessionError {
  const at = resetsAt(d, l);
  const msg =
    sent === false
      ? "it takes no prompt before the limit lifts; nothing was sent"
      : sent
        ? "the prompt was sent and hit it"
        : "its last turn hit it";
  return new SessionError("LIMITED", `session ${id} is limited (${l.kind}: ${l.message}) until ${at}; ${msg}.`, {
    details: {
      resets_at: at,
      limit_kind: l.kind,
      reset_known: l.reset_known,
      ...(sent !== undefined ? { message_sent: sent } : {}),
    },
  });
}

/** When a limit lifts: as recorded, else read from the CLI's message now (the server records it a moment later). */
export function resetsAt(d: Deps, l: NonNullable<Folded["limit"]>): string {
  const since = l.since ? Date.parse(l.since) : Date.now();
  return l.resets_at ?? limitOf(l.message, Number.isFinite(since) ? since : Date.now(), d.cfg.limitRateWaitMs).resets_at;
}

/** The session's totals once the settled turn is in the record (a few ms: its store write). */
async function totalsAfter(
  d: Deps,
  id: string,
  s: DriverSession,
): Promise<ReturnType<typeof sessionFields> | Record<string, never>> {
  await settled(d, id);
  const r = await d.store.get(id);
  return r ? sessionFields(r, s.live.fold.turn_count) : {};
}

/**
 * Waits until `turn_count` reaches `target`, a permission prompt opens, or the process ends. With checkIdle, a turn
 * that left background tasks running is not the end: the wait goes on until a turn ends with none.
 */
export async function waitTurn(
  d: Deps,
  s: DriverSession,
  target: number,
  timeoutMs: number,
  ctx: CallContext,
  o: { checkIdle?: boolean } = {},
): Promise<TurnResult> {
  const t0 = Date.now();
  // A quiet turn's screen (an Esc typed in an attached pane, a prompt that blocks it) is looked at by the
  // session layer's screen watch, whoever waits: the fold says what it found (cs:interrupted, cs:blocked).
  // check_idle: the CLI starts a turn of its own (a <task-notification> prompt) when background work ends, so
  // the session is done only when every submitted turn has ended and the last left nothing running.
  const ended = (x: Folded) =>
    x.turn_count >= target &&
    !(o.checkIdle && isLive(x.status) && (x.background_tasks > 0 || x.turn_count < x.prompts_submitted));
  const f = await s.live.waitFor(
    (x) => ended(x) || x.status === "waiting_for_permission" || x.status === "blocked" || !isLive(x.status),
    {
      timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      tickMs: 1000,
      tick: (ms) => {
        if (ms < 1500 || ms % PROGRESS_EVERY_MS < 1000)
          ctx.progress?.({ progress: ms, total: timeoutMs, message: `session ${s.id} is ${s.live.fold.status}` });
      },
    },
  );
  const why = f && !isLive(f.status) ? d.endReasons.get(s.id) : undefined;
  if (why) throw new SessionError("SESSION_DEAD", `session ${s.id} was ended: ${why}.`, { details: { reason: why } });
  return turnResult(f ?? s.live.fold, f === undefined, Date.now() - t0);
}

/** A turn that ended gets the figures its driver knows (headless: the SDK's result of that prompt). */
async function withFigures(
  d: Deps,
  kind: BackendKind,
  s: DriverSession,
  prompt: number,
  out: TurnResult,
  now = false,
): Promise<TurnResult> {
  if (out.timed_out || prompt < 1 || s.live.fold.turn_count < prompt) return out;
  const figures = await d.runners[kind]?.driver.turnFigures?.(s, prompt, { now });
  return figures ? { ...out, ...figures } : out;
}

/** The parts of a driver's figures that a `usage` notification carries. */
function usageOf(f: TurnFigures | undefined): Partial<TurnFigures> {
  const out: Partial<TurnFigures> = {};
  if (f?.usage) out.usage = f.usage;
  if (f?.model_usage) out.model_usage = f.model_usage;
  if (f?.cost_usd !== undefined) out.cost_usd = f.cost_usd;
  if (f?.cost_complete !== undefined) out.cost_complete = f.cost_complete;
  return out;
}

function turnResult(cur: Folded, timedOut: boolean, waited: number): TurnResult {
  let final: string = cur.status;
  if (!timedOut && cur.status === "idle" && cur.last_turn === "failed") final = "error";
  const out: TurnResult = {
    completed: !timedOut && (cur.status === "idle" || cur.status === "ready" || cur.status === "hibernated"),
    timed_out: timedOut,
    waited_ms: waited,
    final_state: final,
  };
  if (cur.last_response !== undefined) out.last_response = cur.last_response;
  if (cur.last_turn) out.turn_outcome = cur.last_turn;
  if (final === "error" && cur.last_error) out.error = cur.last_error;
  if (cur.pending_permission) out.pending_permission = publicPending(cur.pending_permission);
  if (cur.blocked && cur.status === "blocked") out.blocked = publicBlocked(cur.blocked);
  if (cur.background_tasks) out.background_tasks = cur.background_tasks;
  if (cur.needs_input) out.needs_input = cur.needs_input.message;
  if (cur.sandbox_violations) out.sandbox_violations = cur.sandbox_violations;
  if (cur.permission_denials?.length) out.permission_denials = cur.permission_denials;
  return out;
}

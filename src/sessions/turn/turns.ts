/**
 * A turn: a prompt delivered (keys.ts, after a wake when the session sleeps), then a wait on the fold until the turn
 * ends, a permission request opens, or the process goes. Answers and interrupts are control.ts.
 */
import type { Resolved, SendInput, SendOutput, WaitInput, WaitOutput } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { limitOf } from "../../core/limit.js";
import type { BackendKind } from "../../core/events.js";
import { acceptsPrompt, isLive } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { DriverSession } from "../../runners/driver.js";
import { ANY_RUNNER, checkPrompt, checkUsable } from "../checks.js";
import { beginTurn, recordUnended, settled, settleTurn } from "../spend/cost.js";
import { sessionFields } from "../spend/totals.js";
import { runnerOf, type Deps } from "../deps.js";
import { wakeIfHibernated, type Woke } from "../launch/wake.js";
import type { CarryOut } from "../launch/resume.js";
import { checkSpendable } from "../spend/pool.js";
import { countSent, SEND_LOCK_MS, withSessionKeys } from "./keys.js";
import { refused, takePlace, turnOver } from "./queue.js";
import { publicBlocked, publicPending } from "../views.js";

const PROGRESS_EVERY_MS = 5000;
/** The value of `p` if it has already settled, else `{}`: no timer, no wait (a resolved promise wins the race first). */
function ifSettled<T extends object>(p: Promise<T>): Promise<T | Record<string, never>> {
  return Promise.race([p, Promise.resolve({})]);
}

type TurnResult = Omit<WaitOutput, "session_id">;

function busyError(id: string, status: string): SessionError {
  const suggestion =
    status === "waiting_for_permission"
      ? "Answer the pending permission prompt with respond_permission first."
      : status === "blocked"
        ? "A screen of Claude Code waits for an answer: see `blocked` in wait_for_completion or list_sessions, and answer " +
          "it with answer_prompt (or interrupt_session)."
        : undefined;
  return new SessionError("SESSION_BUSY", `session ${id} is ${status}.`, suggestion ? { suggestion } : {});
}

function checkTurns(r: { session_id: string; max_turns?: number | undefined }, f: Folded): void {
  if (r.max_turns !== undefined && f.prompts_submitted >= r.max_turns) {
    throw new SessionError(
      "LIMIT_REACHED",
      `session ${r.session_id} has used its ${r.max_turns} turn(s) (max_turns); resuming keeps the count.`,
      {
        suggestion: "Start a new session for more turns (max_turns counts every turn of a session, across resume_session).",
      },
    );
  }
}

/** The session was hibernated between the wake check and the send lock: wake it and try again. */
class HibernatedMeanwhile extends Error {}

/**
 * send_message and every call that sends a prompt (broadcast, sync_context): a hibernated session is woken first
 * (hibernate.ts), and the result says so (`woke`, `wake_ms`).
 */
export async function send(d: Deps, input: Resolved<SendInput>, ctx: CallContext): Promise<SendOutput> {
  // What every runner refuses first; then the session's runner's own rules (a headless session's message may
  // hold what the input box must refuse: runners/prompt.ts).
  checkPrompt(d.cfg, input.message, "message", input.bash_mode, ANY_RUNNER);
  // A prompt the session would refuse anyway (max_turns, its budget spent) does not wake it.
  const r0 = await d.registry.record(input.session_id);
  const text = checkPrompt(d.cfg, input.message, "message", input.bash_mode, d.runners[r0.backend]?.caps);
  const f0 = (await d.registry.follow(input.session_id)).fold;
  // A session parked on a usage limit takes no prompt before the limit lifts (issue 33): the server wakes it then.
  if (f0.limit && (f0.status === "hibernated" || f0.status === "idle") && Date.now() < Date.parse(resetsAt(d, f0.limit)))
    throw limitedError(d, input.session_id, f0.limit, false);
  if (f0.status === "hibernated") {
    checkTurns(r0, f0);
    await checkSpendable(d, r0);
  }
  let woke: Woke | undefined;
  const h = f0.status === "hibernated" && !input.bash_mode ? await d.registry.handle(input.session_id) : undefined;
  for (let attempt = 0; ; attempt++) {
    // The waking call's prompt travels with the launch when it can (no input box to wait for, no paste).
    let carriedTurn: Promise<SendOutput> | undefined;
    const out: CarryOut = {};
    const carry = h
      ? { text, out, onCarried: () => void (carriedTurn = afterCarried(d, input, r0.backend, h, out, ctx)) }
      : undefined;
    const w = await wakeIfHibernated(d, input.session_id, ctx, carry);
    woke = w ?? woke;
    try {
      // A call that joined another's wake goes in line after that call's turn (the carried prompt may be running).
      const out = await (carriedTurn ?? sendOnce(d, input, text, ctx, w !== undefined));
      return woke ? { ...out, ...woke } : out;
    } catch (e) {
      if (!(e instanceof HibernatedMeanwhile)) throw e;
      if (attempt >= 2)
        throw new SessionError("SESSION_BUSY", `session ${input.session_id} was hibernated again while its wake was under way.`, {
          suggestion: "Try again (CLAUDE_SESSIONS_MAX_LIVE may be too low for the sessions in use).",
        });
    }
  }
}

/**
 * A prompt the wake's launch carried (hibernate.ts): Claude took it; the turn is waited for as a sent one's, first in
 * this process's line of prompts to the session (registered before the wake's other callers go on).
 */
function afterCarried(
  d: Deps,
  input: Resolved<SendInput>,
  kind: BackendKind,
  s: DriverSession,
  c: CarryOut,
  ctx: CallContext,
): Promise<SendOutput> {
  const t0 = Date.now();
  const run = (): Promise<SendOutput> => {
    const out: SendOutput = {
      session_id: input.session_id,
      message_sent: true,
      sent_at: c.sent_at!,
      final_state: s.live.fold.status,
    };
    if (input.wait_for_response === false) return Promise.resolve(out);
    return turnOutcome(d, input.session_id, kind, s, c.promptNo!, out, input.timeout_ms ?? 30_000, ctx, t0, input.wait_for_usage);
  };
  return inLine(s, run);
}

/** One prompt at a time per session in this process: `run` goes after the prompts already in line. */
function inLine<T>(s: DriverSession, run: () => Promise<T>): Promise<T> {
  const p = s.live.sendChain.then(run, run);
  s.live.sendChain = p.catch(() => {});
  return p;
}

/** The session took another prompt between the turn's end and the send lock (another server's): wait again. */
class StillBusy extends Error {}

/**
 * `afterWake`: a turn under way does not refuse the call at once; the line of prompts decides (under the lock).
 * `queue` to a session in a turn: the prompt is held by the server (queue.ts) and checked again when it is delivered.
 */
async function sendOnce(
  d: Deps,
  input: Resolved<SendInput>,
  text: string,
  ctx: CallContext,
  afterWake = false,
): Promise<SendOutput> {
  const r = await d.registry.record(input.session_id);
  const s = await d.registry.handle(input.session_id);
  const status = s.live.fold.status;
  if (status === "hibernated") throw new HibernatedMeanwhile();
  checkUsable(r, status);
  if (status === "blocked" || (!acceptsPrompt(status) && !input.queue && !afterWake)) throw busyError(r.session_id, status);
  checkTurns(r, s.live.fold);
  await checkSpend(d, r.session_id);
  const { driver } = runnerOf(d, r.backend);
  const t0 = Date.now();
  const timeoutMs = input.timeout_ms ?? 30_000;
  const hold = input.queue === true && !input.bash_mode && !acceptsPrompt(status);
  const release = hold ? takePlace(d, r.session_id) : undefined;
  const wait = input.wait_for_response !== false;
  // A prompt held past the call (no wait) is no longer the caller's to cancel or to report progress to.
  const c: CallContext = hold && !wait ? (ctx.actor ? { actor: ctx.actor } : {}) : ctx;
  /** Decided again under the lock: another server may just have sent a prompt to this session. */
  const typed = () =>
    withSessionKeys(d, r.session_id, Math.max(SEND_LOCK_MS, timeoutMs), c, async () => {
      await s.live.refresh();
      const now = s.live.fold.status;
      if (now === "hibernated") throw new HibernatedMeanwhile();
      checkUsable(r, now);
      if (input.bash_mode) return { sent_at: await driver.runShell(s, text, c), before: s.live.fold.prompts_submitted };
      if (hold && !acceptsPrompt(now) && now !== "blocked") throw new StillBusy();
      // A screen that waits for an answer would take the text as its answer: never typed into.
      if (now === "blocked" || (!acceptsPrompt(now) && !input.queue)) throw busyError(r.session_id, now);
      const before = s.live.fold.prompts_submitted;
      await beginTurn(d, r, s.live.fold, before + 1, text);
      return { sent_at: (await driver.deliver(s, text, c)).sent_at, before };
    });
  /** A held prompt: waits for the turn's end, is checked as a new prompt is, then delivered. */
  const held = async () => {
    try {
      for (;;) {
        const f = await turnOver(s, c.signal);
        release?.();
        if (f.status === "hibernated") throw new HibernatedMeanwhile();
        checkUsable(r, f.status);
        checkTurns(r, f);
        // The turn that just ended is read first (its reply line lands after Stop), so its cost counts.
        if (f.turn_count > 0) await settleTurn(d, r.session_id, f.turn_count, f);
        await checkSpend(d, r.session_id);
        try {
          return await typed();
        } catch (e) {
          if (!(e instanceof StillBusy)) throw e;
        }
      }
    } catch (e) {
      release?.();
      // A waiting caller's send wakes the session and tries again; a prompt no one waits on is refused.
      if (e instanceof HibernatedMeanwhile && wait) throw e;
      const err =
        e instanceof HibernatedMeanwhile
          ? new SessionError(
              "SESSION_NOT_READY",
              `session ${r.session_id} was hibernated while the prompt was queued; it was not delivered.`,
              { suggestion: "Send it again: the next prompt wakes the session." },
            )
          : e;
      refused(d, r.session_id, text, t0, err);
      throw err;
    }
  };
  let delivered = false;
  const run = async (): Promise<SendOutput> => {
    const { sent_at, before: promptsBefore } = await (hold ? held() : typed());
    delivered = true;
    await countSent(d, r.session_id, text);
    if (input.bash_mode)
      return { session_id: r.session_id, message_sent: true, sent_at, bash_mode: true, final_state: s.live.fold.status };
    const out: SendOutput = {
      session_id: r.session_id,
      message_sent: true,
      sent_at,
      final_state: s.live.fold.status,
      ...(hold ? { queued: true } : {}),
    };
    if (!wait) return out;
    // Our prompt is number promptsBefore+1; its turn has ended once that many turns have.
    // A held prompt's caller has waited for the turn ahead already: what is left of timeout_ms.
    return turnOutcome(
      d,
      r.session_id,
      r.backend,
      s,
      promptsBefore + 1,
      out,
      hold ? Math.max(0, timeoutMs - (Date.now() - t0)) : timeoutMs,
      ctx,
      t0,
      input.wait_for_usage,
    );
  };
  if (!hold) return inLine(s, run);
  const p = inLine(s, run);
  p.catch(() => {});
  const queuedOut = (): SendOutput => ({
    session_id: r.session_id,
    message_sent: true,
    sent_at: new Date(t0).toISOString(),
    final_state: s.live.fold.status,
    queued: true,
  });
  // Held for delivery after the turn: without a wait the caller goes on; a refusal is audited and recorded (queue.ts).
  if (!wait) return queuedOut();
  // A waiting caller waits for the turn under way up to its timeout_ms; the prompt stays queued past it. Once it is
  // delivered, its own turn's wait (bounded by what is left of timeout_ms) gives the result.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<SendOutput>((res) => {
    timer = setTimeout(() => {
      if (!delivered) res({ ...queuedOut(), completed: false, timed_out: true, waited_ms: Date.now() - t0 });
    }, timeoutMs);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The session's budget before a prompt: the last turn's cost is read first (its reply line lands after Stop). */
async function checkSpend(d: Deps, id: string): Promise<void> {
  const r = await d.registry.record(id);
  if (r.max_budget_usd === undefined && r.budget_pool === undefined) return;
  await settled(d, id);
  await checkSpendable(d, (await d.store.get(id)) ?? r);
}

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
  const w = await withFigures(d, kind, s, promptNo, waited);
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
    // Issue 38: the reply is returned at the turn's end; its usage line lands in the transcript 25–80 ms later and
    // follows in a notification (the next prompt to a session with a budget waits for it: checkSpend).
    // A failed turn (a tool error) carries its figures: no notification follows an error.
    const now = waitUsage || w.turn_outcome === "failed";
    const cost = now ? await settling : await ifSettled(settling);
    if (!now && !("usage" in cost) && !("usage" in out)) {
      out.usage_pending = true;
      void usageLater(d, id, s, promptNo, settling);
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
  id: string,
  s: DriverSession,
  turn: number,
  settling: ReturnType<typeof settleTurn>,
): Promise<void> {
  try {
    const cost = await settling;
    const totals = await totalsAfter(d, id, s);
    d.onTurnUsage?.(id, { turn, ...cost, ...totals });
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
function limitedError(d: Deps, id: string, l: NonNullable<Folded["limit"]>, sent: boolean | undefined): SessionError {
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
function resetsAt(d: Deps, l: NonNullable<Folded["limit"]>): string {
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
async function withFigures(d: Deps, kind: BackendKind, s: DriverSession, prompt: number, out: TurnResult): Promise<TurnResult> {
  if (out.timed_out || prompt < 1 || s.live.fold.turn_count < prompt) return out;
  const figures = await d.runners[kind]?.driver.turnFigures?.(s, prompt);
  return figures ? { ...out, ...figures } : out;
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

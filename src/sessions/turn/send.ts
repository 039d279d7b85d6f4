/**
 * A prompt sent (send_message, broadcast, sync_context, run_task): checked, delivered under the session's keys
 * (keys.ts) after a wake when the session sleeps, or held in the queue (queue.ts) while a turn runs; then its turn
 * waited for (turns.ts). One prompt at a time per session in this process.
 */
import type { Resolved, SendInput, SendOutput } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { BackendKind } from "../../core/events.js";
import { acceptsPrompt } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { DriverSession } from "../../runners/driver.js";
import { ANY_RUNNER, checkPrompt, checkUsable } from "../checks.js";
import { beginTurn, settled, settleTurn } from "../spend/cost.js";
import { runnerOf, type Deps } from "../deps.js";
import { wakeIfHibernated, type Woke } from "../launch/wake.js";
import type { CarryOut } from "../launch/resume.js";
import { checkSpendable } from "../spend/pool.js";
import { countSent, SEND_LOCK_MS, withSessionKeys } from "./keys.js";
import { refused, takePlace, turnOver } from "./queue.js";
import { limitedError, resetsAt, turnOutcome } from "./turns.js";

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
 * (launch/wake.ts), and the result says so (`woke`, `wake_ms`).
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
 * A prompt the wake's launch carried (launch/wake.ts): Claude took it; the turn is waited for as a sent one's, first in
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

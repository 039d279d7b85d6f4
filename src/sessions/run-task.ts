/**
 * run_task: one call for "do this and tell me the result": start a session (headless unless the call names
 * another backend), run the prompt as its first turn, and return that turn's result with the ids to go on with
 * (send_message, resume_session). Cancelling the call interrupts the turn; keep_session false ends the session.
 */
import { assertStartInRoots } from "./launch/roots.js";
import type { RunTaskInput, RunTaskOutput, SendOutput } from "../api/index.js";
import type { CallContext } from "../core/context.js";
import type { BackendKind } from "../core/events.js";
import { allRunners, type Deps } from "./deps.js";
import { kill } from "./life/kill.js";
import { startSession } from "./launch/launch.js";
import { newSessionId } from "./launch/options.js";
import { isLive } from "../core/status.js";
import { interrupt } from "./turn/control.js";
import { send } from "./turn/send.js";
import { turnOutcome } from "./turn/turns.js";
import { poolOf, WarmPool } from "./launch/warm-pool.js";
import { sandboxKey } from "./launch/sandbox.js";

export async function runTask(d: Deps, input: RunTaskInput, ctx: CallContext): Promise<RunTaskOutput> {
  const { prompt, timeout_ms, keep_session, wait_for_usage, ...startOptions } = input;
  // The default-kind choice of run_task: the runner made for one-call tasks (headless), else the server's default.
  const backend = input.backend ?? allRunners(d).find((r) => r.caps.taskDefault)?.kind ?? d.defaultKind;
  const t0 = Date.now();
  const pool = poolOf(d, backend);
  const pooled = pool ? WarmPool.keyOf({ ...input, backend, sandbox: sandboxKey(d.cfg, input.sandbox) }) : undefined;
  if (pooled) await assertStartInRoots(d.cfg, ctx, input);
  const warm = pooled ? await pool?.take(pooled.key) : undefined;
  // A cold start takes the prompt with it (launch.ts: it travels with the launch where the runner can send it so); the
  // id is chosen here so that a session whose first prompt failed can still be ended.
  const id = warm ?? startOptions.session_id ?? newSessionId();
  let running = Boolean(warm);
  const timeoutMs = timeout_ms ?? 600_000;
  // Cancelling before the process has the task's prompt cancels the start (launch/spawn.ts ends the process). Once it has it
  // (a prompt the launch carries: from the spawn; else once the session is up), the prompt is, or is about to be, a
  // turn: that turn is interrupted as soon as it runs, wherever the call was then (the start, or the wait for the turn).
  let stopping = false;
  const stop = () => {
    if (!running || stopping) return;
    stopping = true;
    void interruptTask(d, id).catch(() => {});
  };
  ctx.signal?.addEventListener("abort", stop, { once: true });
  const up = () => {
    running = true;
    if (ctx.signal?.aborted) stop();
  };
  let out: SendOutput;
  try {
    let sentAt: string | undefined;
    if (!warm) sentAt = (await startSession(d, { ...startOptions, session_id: id, backend, prompt }, ctx, up)).sent_at;
    up();
    ctx.progress?.({
      progress: Date.now() - t0,
      message: `session ${id} ${warm ? "taken ready from the warm pool" : `started (${backend})`}; running the task`,
    });
    const sendInput = {
      session_id: id,
      message: prompt,
      wait_for_response: true,
      // Issue 38: the reply at the turn's end, its usage in a notification after (unless the caller waits for it).
      wait_for_usage,
      timeout_ms: timeoutMs,
      queue: false,
      bash_mode: false,
      include_context: false,
    } as const;
    out =
      sentAt !== undefined
        ? await turnOutcome(
            d,
            id,
            backend,
            await d.registry.handle(id),
            1,
            { session_id: id, message_sent: true, sent_at: sentAt, final_state: d.registry.followed(id)?.fold.status ?? "busy" },
            timeoutMs,
            ctx,
            Date.now(),
            wait_for_usage,
          )
        : await send(d, sendInput, ctx);
  } catch (e) {
    if (!keep_session && running) await kill(d, { session_id: id, force: false, save_state: true }).catch(() => undefined);
    throw e;
  } finally {
    ctx.signal?.removeEventListener("abort", stop);
    // After the turn, not during it: the spares' start-up would compete with it for the CPU.
    if (pool && pooled) pool.refill(pooled.key, pooled.options);
  }
  // The reply is in hand: the session ends in the background (its record stays, resumable), once the turn's own
  // figures are in (a result that went out before them: usage_pending).
  if (!keep_session)
    void figuresIn(d, id, backend, out.usage_pending === true)
      .then(() => kill(d, { session_id: id, force: false, save_state: true }))
      .catch((e: unknown) => d.log.warn(`${id}: ending the run_task session: ${String(e)}`));
  const r = await d.registry.record(id);
  const {
    session_id: _s,
    message_sent: _m,
    sent_at: _a,
    queued: _q,
    bash_mode: _b,
    responded_at: _r,
    completed,
    timed_out,
    waited_ms,
    ...turn
  } = out;
  return {
    ...turn,
    session_id: id,
    claude_session_id: r.claude_session_id,
    backend,
    status: d.registry.followed(id)?.fold.status ?? r.status,
    kept: Boolean(keep_session),
    completed: completed ?? false,
    timed_out: timed_out ?? false,
    waited_ms: Date.now() - t0,
  };
}

/** How long a cancelled task's prompt is given to become a turn (so that it can be interrupted) before it is left. */
const CANCEL_TURN_WAIT_MS = 10_000;

/** A cancelled task: its prompt's turn is interrupted once it runs (a prompt carried by the launch may not be a turn yet). */
async function interruptTask(d: Deps, id: string): Promise<void> {
  const s = await d.registry.handle(id);
  // A carried prompt becomes a turn once the CLI is up: the start's own bound, then the wait for the turn.
  const timeoutMs = d.cfg.startTimeoutMs + CANCEL_TURN_WAIT_MS;
  await s.live.waitFor((f) => f.prompts_submitted > 0 || !isLive(f.status), { timeoutMs });
  await interrupt(d, { session_id: id, timeout_ms: 5000 }, {});
}

/** Waits (a few seconds at most: the driver's own limit) for the figures of the session's last turn, if they are pending. */
async function figuresIn(d: Deps, id: string, backend: BackendKind, pending: boolean): Promise<void> {
  const s = pending ? d.registry.followed(id) : undefined;
  if (!s) return;
  await d.runners[backend]?.driver.turnFigures?.(await d.registry.handle(id), s.fold.turn_count);
}

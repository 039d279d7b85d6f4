/**
 * Prompts sent with `queue: true` while a session is in a turn wait here, in the server, and are delivered when the
 * session takes prompts again — never typed into Claude Code's own queue, where they would run one after another
 * with nothing checked between them (8 queued prompts cost 46 times a session's budget). Each is checked when it is
 * delivered (the session's state, max_turns, max_budget_usd); a refused one is a typed error to whoever waits on it,
 * an audit line (actor `server:queue`) and an execution record (`refused`: not a turn, so no metric counts it). A
 * session holds at most CLAUDE_SESSIONS_MAX_QUEUE.
 */
import { SessionError, toSessionError } from "../../core/errors.js";
import { acceptsPrompt, isLive } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { DriverSession } from "../../runners/driver.js";
import type { Deps } from "../deps.js";

/** A held prompt waits for the turn under way as long as it runs (a timer's longest delay). */
const FOREVER_MS = 2 ** 31 - 1;

/** Takes one of the session's queue places; QUEUE_FULL when none is left. Returns its release (idempotent). */
export function takePlace(d: Deps, id: string): () => void {
  const x = d.registry.session(id);
  if (!x) return () => {};
  const max = d.cfg.maxQueue;
  if (x.held >= max) {
    throw new SessionError(
      "QUEUE_FULL",
      `session ${id} already holds ${x.held} queued prompt(s), the most CLAUDE_SESSIONS_MAX_QUEUE (${max}) allows; nothing was queued.`,
      {
        details: { queued: x.held, max_queue: max },
      },
    );
  }
  x.held++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    x.held = Math.max(0, x.held - 1);
  };
}

/** Waits until the session takes a prompt (or ends); `signal`: the waiting caller's cancellation. */
export async function turnOver(s: DriverSession, signal?: AbortSignal): Promise<Folded> {
  const f = await s.live.waitFor((x) => acceptsPrompt(x.status) || !isLive(x.status), {
    timeoutMs: FOREVER_MS,
    ...(signal ? { signal } : {}),
  });
  return f ?? s.live.fold;
}

/** A held prompt that was not delivered: audited, in the execution history, and logged. */
export function refused(d: Deps, id: string, text: string, heldSince: number, e: unknown): void {
  const err = toSessionError(e);
  void d.audit.record({ tool: "send_message", session_id: id, actor: "server:queue", since: heldSince, code: err.code });
  d.history?.recordTurn({
    session_id: id,
    prompt: text,
    started_at: new Date(heldSince),
    ended_at: new Date(),
    outcome: "refused",
    error: `the queued prompt was not delivered: ${err.message}`,
  });
  d.log.info(`${id}: a queued prompt was not delivered: ${err.code} ${err.message}`);
}

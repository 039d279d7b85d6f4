/**
 * Calls over a group of sessions (a team, or a list of ids): broadcast_message and wait_for_sessions. Each member
 * is handled on its own (one member's error is its own result, never the call's), in parallel, with one progress
 * stream for the whole call. Waits wake on each member's hook events (LiveSession waiters), never on a poll.
 */
import type { BroadcastInput, BroadcastOutput, MemberResult, WaitManyInput, WaitManyOutput } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import { ANY_RUNNER, checkPrompt } from "../checks.js";
import type { Deps } from "../deps.js";
import { members, progressStream, type Member } from "./team.js";
import { send } from "../turn/send.js";
import { waitTurn } from "../turn/turns.js";
import { publicBlocked, publicPending } from "../views.js";

const TICK_MS = 5000;

function errorOf(e: unknown): { code: string; message: string } {
  return e instanceof SessionError ? { code: e.code, message: e.message } : { code: "INTERNAL", message: String(e) };
}

/** Runs `each` for every member at once; a progress line every few seconds and whenever a member is done. */
async function overMembers<R>(
  list: Member[],
  total: number,
  ctx: CallContext,
  what: string,
  each: (m: Member, mctx: CallContext) => Promise<R>,
): Promise<R[]> {
  const t0 = Date.now();
  const report = progressStream(ctx.progress, total);
  let done = 0;
  report(`${what}: 0 of ${list.length} done`, 0);
  const ticker = setInterval(() => report(`${what}: ${done} of ${list.length} done`, Date.now() - t0), TICK_MS);
  ticker.unref();
  // Members report nothing themselves: the call has one stream. Cancellation reaches every member.
  const mctx: CallContext = ctx.signal ? { signal: ctx.signal } : {};
  try {
    return await Promise.all(
      list.map(async (m) => {
        try {
          return await each(m, mctx);
        } finally {
          done += 1;
          report(`${what}: ${done} of ${list.length} done (${m.teammate_name ?? m.session_id})`, Date.now() - t0);
        }
      }),
    );
  } finally {
    clearInterval(ticker);
  }
}

export async function broadcast(d: Deps, input: BroadcastInput, ctx: CallContext): Promise<BroadcastOutput> {
  // The message is checked before anything is typed anywhere: what every runner refuses, then the rules of each
  // kind of runner among the members (a headless member's message may hold what a terminal must refuse).
  checkPrompt(d.cfg, input.message, "message", false, ANY_RUNNER);
  const list = await members(d, input);
  const records = (await d.store.read()).sessions;
  for (const kind of new Set(list.map((m) => records[m.session_id]?.backend)))
    checkPrompt(d.cfg, input.message, "message", false, kind ? d.runners[kind]?.caps : undefined);
  const timeoutMs = input.timeout_ms ?? 30_000;
  const results = await overMembers(list, timeoutMs, ctx, "broadcast", async (m, mctx): Promise<MemberResult> => {
    const base = { session_id: m.session_id, ...(m.teammate_name ? { teammate_name: m.teammate_name } : {}) };
    try {
      const r = await send(
        d,
        {
          session_id: m.session_id,
          message: input.message,
          wait_for_response: input.wait_for_response !== false,
          wait_for_usage: true,
          timeout_ms: timeoutMs,
          queue: false,
          bash_mode: false,
          include_context: false,
        },
        mctx,
      );
      const out: MemberResult = { ...base, message_sent: r.message_sent, sent_at: r.sent_at, final_state: r.final_state };
      if (r.response !== undefined) out.response = r.response;
      if (r.completed !== undefined) out.completed = r.completed;
      if (r.timed_out !== undefined) out.timed_out = r.timed_out;
      if (r.pending_permission) out.pending_permission = r.pending_permission;
      if (r.woke) Object.assign(out, { woke: r.woke, wake_ms: r.wake_ms });
      // Delivered, then the process went away during the turn: that member's own error.
      if (r.final_state === "dead" || r.final_state === "zombie")
        out.error = { code: "SESSION_DEAD", message: `session ${m.session_id} ended during the turn.` };
      else if (r.final_state === "error" && r.error) out.error = { code: "PROCESS_ERROR", message: r.error };
      return out;
    } catch (e) {
      if (e instanceof SessionError && e.code === "CANCELLED") throw e;
      return { ...base, message_sent: false, error: errorOf(e) };
    }
  });
  const out: BroadcastOutput = {
    results,
    sent_count: results.filter((r) => r.message_sent).length,
    failed_count: results.filter((r) => r.error).length,
  };
  if (input.team_name) out.team_name = input.team_name;
  return out;
}

type WaitEntry = WaitManyOutput["sessions"][number];

export async function waitMany(d: Deps, input: WaitManyInput, ctx: CallContext): Promise<WaitManyOutput> {
  const list = await members(d, input);
  const mode = input.mode ?? "all";
  const timeoutMs = input.timeout_ms ?? 300_000;
  const t0 = Date.now();
  // mode any: the first member done stops the others' waits (their current state is reported as it is).
  const stop = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;
  const entries = await overMembers(list, timeoutMs, ctx, `waiting (${mode})`, async (m): Promise<WaitEntry> => {
    const base = { session_id: m.session_id, ...(m.teammate_name ? { teammate_name: m.teammate_name } : {}) };
    let s;
    try {
      s = await d.registry.handle(m.session_id);
    } catch (e) {
      return { ...base, done: true, final_state: "error", error: errorOf(e).message };
    }
    try {
      const w = await waitTurn(d, s, s.live.fold.prompts_submitted, timeoutMs, { signal });
      if (!w.timed_out && mode === "any") stop.abort();
      return entry(base, s.live.fold, !w.timed_out);
    } catch (e) {
      if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
      if (!(e instanceof SessionError && e.code === "CANCELLED"))
        return { ...base, done: true, final_state: "error", error: errorOf(e).message };
      // Stopped because another member was done first (mode any): is this one done as well?
      const f = s.live.fold;
      const done = f.turn_count >= f.prompts_submitted && f.status !== "busy";
      return entry(base, f, done || f.status === "waiting_for_permission" || f.status === "blocked" || !isLive(f.status));
    }
  });
  const doneCount = entries.filter((e) => e.done).length;
  const done = mode === "any" ? doneCount > 0 : doneCount === entries.length;
  return { mode, done, timed_out: !done, waited_ms: Date.now() - t0, sessions: entries };
}

function entry(base: { session_id: string; teammate_name?: string }, f: Folded, done: boolean): WaitEntry {
  let final: string = f.status;
  if (f.status === "idle" && f.last_turn === "failed") final = "error";
  const e: WaitEntry = { ...base, done, final_state: final };
  if (f.last_response !== undefined) e.last_response = f.last_response;
  if (f.pending_permission && f.status === "waiting_for_permission") e.pending_permission = publicPending(f.pending_permission);
  if (f.blocked && f.status === "blocked") e.blocked = publicBlocked(f.blocked);
  if (final === "error" && f.last_error) e.error = f.last_error;
  return e;
}

/**
 * Control of a session in a turn: a permission answered, a blocking screen answered, an interrupt. Each takes the
 * session's keys (keys.ts) and waits for nothing else.
 */
import type {
  AnswerPromptInput,
  AnswerPromptOutput,
  InterruptInput,
  InterruptOutput,
  RespondInput,
  RespondOutput,
  Resolved,
} from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { inTurn } from "../../core/status.js";
import { checkUsable } from "../checks.js";
import { runnerOf, type Deps } from "../deps.js";
import { SEND_LOCK_MS, withSessionKeys } from "./keys.js";

export async function respondPermission(d: Deps, input: Resolved<RespondInput>, ctx: CallContext): Promise<RespondOutput> {
  const r = await d.registry.record(input.session_id);
  const s = await d.registry.handle(input.session_id);
  const pending = s.live.fold.pending_permission;
  if (s.live.fold.status !== "waiting_for_permission" || !pending) {
    throw new SessionError(
      "SESSION_NOT_READY",
      `session ${r.session_id} has no pending permission prompt (it is ${s.live.fold.status}).`,
      {
        suggestion:
          s.live.fold.status === "blocked"
            ? "A screen waits for an answer (a permission dialog without its hook is one): answer it with answer_prompt and one of `blocked.choices`."
            : "Call wait_for_completion; it reports pending_permission when a prompt opens.",
      },
    );
  }
  const { driver } = runnerOf(d, r.backend);
  const answer = {
    decision: input.decision,
    ...(input.message !== undefined ? { message: input.message } : {}),
    ...(input.updated_input !== undefined ? { updated_input: input.updated_input } : {}),
  };
  await withSessionKeys(d, r.session_id, SEND_LOCK_MS, ctx, () => driver.answerPermission(s, answer, ctx));
  await d.registry.flushed();
  return {
    session_id: r.session_id,
    answered: true,
    decision: input.decision,
    tool_name: pending.tool_name,
    status: s.live.fold.status,
  };
}

/** Answers the screen that blocks a session with one of its choices (the driver presses the server-made keys). */
export async function answerPrompt(d: Deps, input: Resolved<AnswerPromptInput>, ctx: CallContext): Promise<AnswerPromptOutput> {
  const r = await d.registry.record(input.session_id);
  const s = await d.registry.handle(input.session_id);
  await s.live.refresh();
  if (s.live.fold.status !== "blocked" || !s.live.fold.blocked) {
    throw new SessionError(
      "SESSION_NOT_READY",
      `session ${r.session_id} is not blocked by a screen (it is ${s.live.fold.status}).`,
      {
        suggestion:
          s.live.fold.status === "waiting_for_permission"
            ? "A permission request waits: answer it with respond_permission."
            : "Call wait_for_completion; it reports `blocked` with the choices when a screen waits for an answer.",
      },
    );
  }
  const { driver } = runnerOf(d, r.backend);
  const picked = await withSessionKeys(d, r.session_id, SEND_LOCK_MS, ctx, () => driver.answerPrompt(s, input.choice, ctx));
  await d.registry.flushed();
  return {
    session_id: r.session_id,
    answered: true,
    kind: picked.kind as AnswerPromptOutput["kind"],
    choice: picked.label,
    status: s.live.fold.status,
  };
}

export async function interrupt(d: Deps, input: Resolved<InterruptInput>, ctx: CallContext): Promise<InterruptOutput> {
  const r = await d.registry.record(input.session_id);
  const s = await d.registry.handle(input.session_id);
  checkUsable(r, s.live.fold.status);
  const busy = () => inTurn(s.live.fold.status);
  if (!busy()) return { session_id: r.session_id, interrupted: false, status: s.live.fold.status };
  await runnerOf(d, r.backend).driver.interrupt(s, input.timeout_ms ?? 5000, ctx);
  await d.registry.flushed();
  return { session_id: r.session_id, interrupted: !busy(), status: s.live.fold.status };
}

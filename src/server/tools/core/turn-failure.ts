/**
 * A turn result that reports a failed turn becomes a tool error (isError) carrying the same body in
 * error.details.result: clients that only look at isError see the failure. An MCP error result has no
 * structuredContent, so the body travels in the error's JSON text.
 */
import { SessionError } from "../../../core/errors.js";

interface TurnLike {
  session_id?: string;
  completed?: boolean | undefined;
  timed_out?: boolean | undefined;
  final_state?: string;
  turn_outcome?: string | undefined;
  error?: string | undefined;
  error_subtype?: string | undefined;
  pending_permission?: unknown;
}

/** error_during_execution is how the SDK reports an interrupt: not a failure of the turn. */
const NOT_FAILURES = new Set(["error_during_execution"]);

/** Why the turn failed, or undefined when it did not (it completed, was interrupted, waits, or is still running). */
export function turnFailure(out: TurnLike): { code: "TURN_FAILED" | "SESSION_DEAD"; why: string } | undefined {
  if (out.timed_out || out.completed === undefined || out.pending_permission !== undefined) return undefined;
  if (out.final_state === "dead" || out.final_state === "zombie")
    return { code: "SESSION_DEAD", why: `the process ended during the turn${out.error ? `: ${out.error}` : ""}` };
  if (out.error_subtype && !NOT_FAILURES.has(out.error_subtype))
    return { code: "TURN_FAILED", why: `${out.error_subtype}${out.error ? `: ${out.error}` : ""}` };
  if (out.turn_outcome === "failed" || out.final_state === "error")
    return { code: "TURN_FAILED", why: out.error ?? "the turn ended with an error" };
  return undefined;
}

/** Returns `out`, or throws the failed turn as a SessionError whose details carry `out` whole. */
export function failIfTurnFailed<T extends TurnLike>(tool: string, out: T): T {
  const f = turnFailure(out);
  if (!f) return out;
  throw new SessionError(f.code, `${tool}: the turn of session ${out.session_id ?? "?"} failed: ${f.why}`, {
    details: { result: out },
  });
}

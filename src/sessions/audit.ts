/**
 * The server's own state-changing actions in the audit log (the calls of MCP clients, the web view and the CLI are
 * written by server/call.ts): a time limit ending, interrupting or pruning a session. The actor is
 * `server:<reason>`; the line has the action, the session, the outcome and the duration, never a message.
 */
import { toSessionError } from "../core/errors.js";
import type { Deps } from "./deps.js";

/** Why the server itself acted (`server:shutdown`, sessions that end with the process, is written by app.ts). */
export type ServerReason =
  "idle_ttl" | "busy_limit" | "retention" | "max_duration" | "hibernate_after" | "max_live" | "budget" | "usage_limit";

/** Runs `act` and writes its audit line (`tool` names the action: kill_session, interrupt_session, prune_session). */
export async function serverAction<T>(
  d: Deps,
  reason: ServerReason,
  tool: string,
  sessionId: string,
  act: () => Promise<T>,
): Promise<T> {
  const t0 = Date.now();
  const line = { tool, session_id: sessionId, actor: `server:${reason}`, since: t0 };
  try {
    const out = await act();
    void d.audit.record(line);
    return out;
  } catch (e) {
    void d.audit.record({ ...line, code: toSessionError(e).code });
    throw e;
  }
}

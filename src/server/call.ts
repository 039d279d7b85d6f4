/**
 * The one way every transport calls a tool — MCP (server.ts), the web view's controls (http/web.ts) and the CLI
 * (cli/main.ts) and a team member's own tools (member/handler.ts): the tool's authorize step, if it has one,
 * says who may call it; the arguments are validated against the tool's input schema, the result is checked against
 * its output schema (CLAUDE_SESSIONS_STRICT_RESULTS: a mismatch is an INTERNAL error, else a logged one), and a call
 * that can change something (not `readOnlyHint`), or any member's call, leaves one audit line (auditCall) saying who
 * asked (`ctx.actor`). The server's own actions (time limits) are written by sessions/audit.ts to the same log.
 */
import type { z } from "zod";
import type { CallContext } from "../core/context.js";
import { SessionError, toSessionError } from "../core/errors.js";
import type { SessionService } from "../sessions/service.js";
import { sessionOf } from "../store/audit.js";
import { runOnce } from "./idempotent.js";
import type { CallRouter, Tool } from "./tool.js";

export function zodMessage(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join(".") : "(arguments)"}: ${i.message}`).join("; ");
}

/** Printable ASCII only, at most 100 characters: what a client or user names itself goes into the log as data. */
export function actorPart(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, "?").slice(0, 100);
}

export interface CallOptions {
  /** The MCP client's name from its handshake, kept in the audit line as `client`. */
  client?: string;
  /** With nodes configured: the call goes to the machine that runs its session (src/nodes). */
  router?: CallRouter;
}

/**
 * The one audit line of a call (store/audit.ts; the server's own actions are sessions/audit.ts'). A read-only call
 * leaves none, unless a team member made it: every member call is audited. The session is the one the call named
 * or made, or for a member's call the teammate it acted on (else the member itself).
 */
export function auditCall(
  svc: SessionService,
  tool: Tool,
  raw: unknown,
  ctx: CallContext,
  o: CallOptions,
  t0: number,
  result: unknown,
  code?: string,
): void {
  if (tool.annotations.readOnlyHint && !ctx.member) return;
  const session_id = ctx.member ? (ctx.member.target ?? ctx.member.session_id) : sessionOf(raw, result);
  void svc.audit.record({ tool: tool.name, session_id, actor: ctx.actor ?? "unknown", client: o.client, since: t0, code });
}

/**
 * Calls `tool` with `raw` arguments for `ctx.actor`: its authorize step first (a refusal does nothing), then the
 * arguments, the handler and the result's check; throws a SessionError (INVALID_ARGUMENT for bad arguments).
 */
export async function callTool<R>(
  svc: SessionService,
  tool: Tool<R>,
  raw: unknown,
  ctx: CallContext,
  o: CallOptions = {},
): Promise<R> {
  const t0 = Date.now();
  let c = ctx;
  try {
    if (tool.authorize) c = await tool.authorize(svc, ctx);
    // A call with an idempotency_key runs once per caller and key (idempotent.ts); a repeat gets its outcome.
    const value = await runOnce(svc, tool, raw ?? {}, c, async (cc) => {
      const res = o.router ? await o.router.invoke(tool, svc, raw ?? {}, cc) : await tool.invoke(svc, raw ?? {}, cc);
      if (!res.ok) throw new SessionError("INVALID_ARGUMENT", `invalid arguments for ${tool.name}: ${zodMessage(res.error)}`);
      // The result must be what the tool's output schema promises.
      const checked = tool.output.safeParse(res.value);
      if (!checked.success) {
        const why = `${tool.name} returned a result that does not match its output schema: ${zodMessage(checked.error)}`;
        if (svc.deps.cfg.strictResults) throw new SessionError("INTERNAL", why);
        svc.deps.log.error(why);
      }
      return res.value;
    });
    auditCall(svc, tool, raw, c, o, t0, value);
    return value;
  } catch (err) {
    auditCall(svc, tool, raw, c, o, t0, undefined, toSessionError(err).code);
    throw err;
  }
}

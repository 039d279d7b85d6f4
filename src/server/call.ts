/**
 * The one way every transport calls a tool — MCP (server.ts), the web view's controls (http/web.ts) and the CLI
 * (cli/main.ts): the arguments are validated against the tool's input schema, the result is checked against its
 * output schema (CLAUDE_SESSIONS_STRICT_RESULTS: a mismatch is an INTERNAL error, else a logged one), and a call
 * that can change something (not `readOnlyHint`) leaves one audit line saying who asked (`ctx.actor`). The server's
 * own actions (time limits) are written by sessions/audit.ts to the same log.
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

/** Calls `tool` with `raw` arguments for `ctx.actor`; throws a SessionError (INVALID_ARGUMENT for bad arguments). */
export async function callTool<R>(svc: SessionService, tool: Tool<R>, raw: unknown, ctx: CallContext, o: CallOptions = {}): Promise<R> {
  const t0 = Date.now();
  const audited = (result: unknown, code?: string) => {
    if (tool.annotations.readOnlyHint) return;
    const session_id = sessionOf(raw, result);
    void svc.audit.append({
      time: new Date(t0).toISOString(),
      tool: tool.name,
      ...(session_id ? { session_id } : {}),
      actor: ctx.actor ?? "unknown",
      ...(o.client ? { client: o.client } : {}),
      outcome: code ? "error" : "ok",
      ...(code ? { error_code: code } : {}),
      duration_ms: Date.now() - t0,
    });
  };
  try {
    // A call with an idempotency_key runs once per caller and key (idempotent.ts); a repeat gets its outcome.
    const value = await runOnce(svc, tool, raw ?? {}, ctx, async (c) => {
      const res = o.router ? await o.router.invoke(tool, svc, raw ?? {}, c) : await tool.invoke(svc, raw ?? {}, c);
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
    audited(value);
    return value;
  } catch (err) {
    audited(undefined, toSessionError(err).code);
    throw err;
  }
}

/**
 * `idempotency_key` (issue 31), for every transport through call.ts: a call of a tool whose input takes the key runs
 * once per (caller, tool, key) within 24 h. The first call claims the key in the state directory
 * (store/idempotency.ts) and runs; a repeat gets its outcome (waiting while it runs, in this server or another), and
 * a repeat with other arguments is IDEMPOTENCY_MISMATCH. The caller is the audit log's actor (`ctx.actor`:
 * `mcp:<transport>:<client name/version>`, `web:<sign-in>`, `cli:<user>`), which a client keeps across
 * reconnections and restarts. A claimed call runs to its end even when its caller goes away (its cancellation is
 * not passed on), so that the retry gets its result; a refusal (the codes below: nothing was started) frees the key.
 */
import { createHash } from "node:crypto";
import { withoutSignal, type CallContext } from "../core/context.js";
import { SessionError, toSessionError, type ErrorCode } from "../core/errors.js";
import type { SessionService } from "../sessions/service.js";
import { canonicalJson, IdempotencyStore, OwnerGone, type IdemOutcome } from "../store/idempotency.js";
import type { Tool } from "./tool.js";

/** Errors raised before anything ran: the key stays free, so the retry runs the call. */
const REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "INVALID_ARGUMENT",
  "SESSION_NOT_FOUND",
  "SESSION_BUSY",
  "SESSION_NOT_READY",
  "PERMISSION_DENIED",
  "LIMIT_REACHED",
  "ALREADY_EXISTS",
  "CLAUDE_NOT_FOUND",
  "TMUX_NOT_FOUND",
  "NODE_UNREACHABLE",
]);

const stores = new Map<string, IdempotencyStore>();

function storeOf(stateDir: string): IdempotencyStore {
  let s = stores.get(stateDir);
  if (!s) stores.set(stateDir, (s = new IdempotencyStore(stateDir)));
  return s;
}

/** Whether `tool` takes an idempotency_key (its input schema has the field). */
export function takesKey(tool: Tool): boolean {
  const shape = (tool.input as { shape?: Record<string, unknown> }).shape;
  return shape !== undefined && "idempotency_key" in shape;
}

/** What binds a key: the parsed arguments but the key, `env` reduced to its names (no value is hashed or written). */
function argsHash(args: Record<string, unknown>): string {
  const { idempotency_key: _k, env, ...rest } = args;
  const bound = env && typeof env === "object" ? { ...rest, env_names: Object.keys(env).sort() } : rest;
  return createHash("sha256").update(canonicalJson(bound)).digest("hex");
}

/**
 * Runs `run` once for the key in `raw` (when the tool takes one and the call gives it), else just runs it.
 * Arguments that do not parse go to `run` unclaimed (it reports them).
 */
export async function runOnce<R>(
  svc: SessionService,
  tool: Tool<R>,
  raw: unknown,
  ctx: CallContext,
  run: (ctx: CallContext) => Promise<R>,
): Promise<R> {
  if (!takesKey(tool) || typeof (raw as { idempotency_key?: unknown } | null)?.idempotency_key !== "string") return run(ctx);
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) return run(ctx);
  const data = parsed.data as Record<string, unknown>;
  const key = data.idempotency_key as string;
  const caller = ctx.actor ?? "unknown";
  const args = argsHash(data);
  const store = storeOf(svc.deps.cfg.stateDir);
  for (;;) {
    const claim = await store.claim(caller, tool.name, key, args);
    if (claim.mine) {
      // The work is the key's, not the caller's: it goes on if the caller goes away, so a retry can have its result.
      const detached = withoutSignal(ctx);
      let outcome: IdemOutcome;
      try {
        const value = await run(detached);
        outcome = { ok: true, value };
      } catch (e) {
        const err = toSessionError(e);
        if (REFUSALS.has(err.code)) await claim.release();
        else
          await claim
            .finish({ ok: false, error: err.toBody() })
            .catch((w: unknown) => svc.deps.log.warn(`idempotency record of ${tool.name}: ${String(w)}`));
        throw e;
      }
      await claim.finish(outcome).catch((w: unknown) => svc.deps.log.warn(`idempotency record of ${tool.name}: ${String(w)}`));
      return outcome.value as R;
    }
    if (claim.record.args !== args) {
      throw new SessionError(
        "IDEMPOTENCY_MISMATCH",
        `idempotency_key ${JSON.stringify(key)} was used for a ${tool.name} call with other arguments ` +
          `(at ${new Date(claim.record.created_ms).toISOString()}); nothing was run.`,
        {
          details: { tool: tool.name },
        },
      );
    }
    const done = claim.record.done ?? (await waitOutcome(store, caller, tool.name, key, ctx));
    if (!done) continue; // the first call was refused, which frees the key: this one runs
    if (done.ok) return done.value as R;
    const b = done.error;
    throw new SessionError(b.code, b.message, { suggestion: b.suggestion, ...(b.details ? { details: b.details } : {}) });
  }
}

/** The outcome of the call that holds the key, once it has one (undefined: it was refused and the key is free). */
async function waitOutcome(
  store: IdempotencyStore,
  caller: string,
  tool: string,
  key: string,
  ctx: CallContext,
): Promise<IdemOutcome | undefined> {
  try {
    return (await store.wait(caller, tool, key, ctx.signal))?.done;
  } catch (e) {
    if (e instanceof OwnerGone) {
      throw new SessionError(
        "IDEMPOTENCY_UNKNOWN",
        `the ${tool} call with idempotency_key ${JSON.stringify(key)} did not finish: ${e.message}; it was not run again.`,
        { details: { tool } },
      );
    }
    if (ctx.signal?.aborted)
      throw new SessionError(
        "CANCELLED",
        `waiting for the ${tool} call with this idempotency_key was cancelled (that call runs on).`,
      );
    throw e;
  }
}

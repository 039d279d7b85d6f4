/** sync_context for one session or a whole team, and send_message {include_context}. */
import type { Resolved, SendInput, SendOutput, SyncInput, SyncOutput, SyncResult } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { checkUsable } from "../checks.js";
import { assertType, gather, type ContextType } from "./context-sync.js";
import type { Deps } from "../deps.js";
import { members, resolveId } from "./team.js";
import { send } from "../turn/send.js";

export async function syncContext(d: Deps, input: SyncInput, ctx: CallContext): Promise<SyncOutput> {
  const type = assertType(input);
  if (input.session_id === undefined && input.teammate_name === undefined && input.team_name !== undefined) {
    const list = await members(d, { team_name: input.team_name });
    const mctx: CallContext = ctx.signal ? { signal: ctx.signal } : {};
    const results = await Promise.all(
      list.map((m) =>
        syncOne(d, m.session_id, input, type, mctx).catch((e: unknown): SyncResult => {
          if (e instanceof SessionError && e.code === "CANCELLED") throw e;
          const error =
            e instanceof SessionError ? { code: e.code, message: e.message } : { code: "INTERNAL", message: String(e) };
          return { session_id: m.session_id, synced_at: new Date().toISOString(), context_type: type, sent: false, error };
        }),
      ),
    );
    return { synced_at: new Date().toISOString(), context_type: type, sent: results.some((r) => r.sent), results };
  }
  return syncOne(d, await resolveId(d, input), input, type, ctx);
}

async function syncOne(d: Deps, id: string, input: SyncInput, type: ContextType, ctx: CallContext): Promise<SyncResult> {
  const r = await d.registry.record(id);
  const s = await d.registry.handle(id);
  if (s.live.fold.status !== "hibernated") checkUsable(r, s.live.fold.status);
  const g = await gather(await d.registry.open(id), r.cwd, type, input.paths, input.force === true);
  const out: SyncResult = {
    session_id: id,
    synced_at: new Date().toISOString(),
    context_type: type,
    sent: false,
    files_synced: g.files_synced,
    env_vars_synced: g.env_vars_synced,
    git_status_synced: g.git_status_synced,
    final_state: s.live.fold.status,
  };
  if (g.warnings.length) out.warnings = g.warnings;
  if (!g.changed && !input.force) return out;
  const sent = await send(
    d,
    {
      session_id: id,
      message: g.text,
      wait_for_response: input.wait_for_response !== false,
      wait_for_usage: true,
      timeout_ms: input.timeout_ms ?? 30_000,
      queue: false,
      bash_mode: false,
      include_context: false,
    },
    ctx,
  );
  g.commit();
  return {
    ...out,
    sent: sent.message_sent,
    final_state: sent.final_state,
    ...(sent.woke ? { woke: sent.woke, wake_ms: sent.wake_ms } : {}),
  };
}

/** send_message {include_context}: what changed since the last sync goes before the message, in the same prompt. */
export async function sendWithContext(d: Deps, input: Resolved<SendInput>, ctx: CallContext): Promise<SendOutput> {
  if (!input.include_context || input.bash_mode) return send(d, input, ctx);
  const r = await d.registry.record(input.session_id);
  const g = await gather(await d.registry.open(input.session_id), r.cwd, "all", undefined);
  if (!g.changed) return send(d, input, ctx);
  const out = await send(d, { ...input, message: `${g.text}\n---\n\n${input.message}` }, ctx);
  g.commit();
  return out;
}

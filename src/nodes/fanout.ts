/**
 * Team tools across nodes: broadcast_message, wait_for_sessions and sync_context over a team (or a list of ids)
 * whose members run on several machines. The group is split by owner, each part is the same tool call on its
 * machine (the team form stays a team form there), and the answers are merged into one. A wait fails with
 * NODE_UNREACHABLE as soon as a part's node is lost; a broadcast reports the lost members as failed.
 */
import type { CallContext } from "../core/context.js";
import { SessionError, toSessionError } from "../core/errors.js";
import { isLive, type Status } from "../core/status.js";
import type { Tool } from "../server/tool.js";
import type { SessionService } from "../sessions/service.js";
import { keysOf } from "./checks.js";
import type { Args, Coordinator } from "./coordinator.js";
import { LOCAL, type Row } from "./router.js";

export type Group = "ids" | "team";

/** Whether a call addresses a group (and which form), for the tools whose answers can be merged (route "group"). */
export function groupOf(tool: Tool, args: Args): Group | undefined {
  if (tool.route !== "group") return undefined;
  if (Array.isArray(args.session_ids)) return "ids";
  const k = keysOf(tool.input);
  if (
    k.has("team_name") &&
    typeof args.team_name === "string" &&
    args.teammate_name === undefined &&
    args.session_id === undefined
  )
    return "team";
  return undefined;
}

interface Part {
  node: string;
  args: Args;
  /** The members this part covers (for a failed broadcast part). */
  members: Row[];
}

async function split(c: Coordinator, svc: SessionService, args: Args, group: Group): Promise<Part[]> {
  const parts = new Map<string, Part>();
  const add = (node: string, r: Row, a: Args) => {
    const p = parts.get(node) ?? { node, args: a, members: [] };
    p.members.push(r);
    parts.set(node, p);
  };
  if (group === "ids") {
    for (const id of args.session_ids as string[]) add((await c.router.ownerOf(id, svc)) ?? LOCAL, { session_id: id }, args);
    for (const p of parts.values()) p.args = { ...args, session_ids: p.members.map((m) => m.session_id) };
    return [...parts.values()];
  }
  const team = args.team_name as string;
  const st = await svc.deps.store.read();
  for (const r of Object.values(st.sessions))
    if (r.team_name === team && isLive(r.status))
      add(LOCAL, { session_id: r.session_id, ...(r.teammate_name ? { teammate_name: r.teammate_name } : {}) }, args);
  await c.router.refreshAll();
  for (const node of c.links.keys()) {
    for (const r of c.router.lastRows(node)) if (r.team_name === team && isLive(r.status as Status)) add(node, r, args);
  }
  return [...parts.values()];
}

/** A child context per part: its own cancellation (linked to the caller's) and one rising progress count. */
function children(ctx: CallContext, n: number): { ctxs: CallContext[]; abort: () => void } {
  const ctls = Array.from({ length: n }, () => new AbortController());
  const abort = () => ctls.forEach((a) => a.abort());
  ctx.signal?.addEventListener("abort", abort, { once: true });
  let count = 0;
  const progress = ctx.progress
    ? (p: { message?: string }) => ctx.progress!({ progress: ++count, ...(p.message ? { message: p.message } : {}) })
    : undefined;
  return { ctxs: ctls.map((a) => ({ signal: a.signal, ...(progress ? { progress } : {}) })), abort };
}

function run(c: Coordinator, tool: Tool, svc: SessionService, p: Part, args: Args, ctx: CallContext): Promise<Args> {
  return p.node === LOCAL ? c.local(tool, svc, args, ctx) : c.remote(p.node, tool, args, ctx);
}

/** Rows of a part's answer marked with its node. */
function rowsOf(p: Part, rows: unknown): Args[] {
  return ((rows ?? []) as Args[]).map((r) => (p.node === LOCAL ? r : { ...r, node: p.node }));
}

export async function fanOut(
  c: Coordinator,
  tool: Tool,
  svc: SessionService,
  args: Args,
  ctx: CallContext,
  group: Group,
): Promise<Args> {
  const parts = await split(c, svc, args, group);
  if (parts.length <= 1) {
    const only = parts[0];
    return only ? run(c, tool, svc, only, only.args, ctx) : c.local(tool, svc, args, ctx);
  }
  if (tool.name === "wait_for_sessions") return waitParts(c, tool, svc, parts, args, ctx);
  const { ctxs } = children(ctx, parts.length);
  const answers = await Promise.allSettled(parts.map((p, i) => run(c, tool, svc, p, p.args, ctxs[i]!)));
  if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
  if (tool.name === "broadcast_message") {
    const results: Args[] = [];
    let sent = 0;
    let failed = 0;
    answers.forEach((a, i) => {
      const p = parts[i]!;
      if (a.status === "fulfilled") {
        results.push(...rowsOf(p, a.value.results));
        sent += a.value.sent_count as number;
        failed += a.value.failed_count as number;
      } else {
        const e = toSessionError(a.reason);
        for (const m of p.members) {
          results.push({
            session_id: m.session_id,
            ...(typeof m.teammate_name === "string" ? { teammate_name: m.teammate_name } : {}),
            message_sent: false,
            error: { code: e.code, message: e.message },
            ...(p.node === LOCAL ? {} : { node: p.node }),
          });
          failed++;
        }
      }
    });
    return {
      ...(typeof args.team_name === "string" ? { team_name: args.team_name } : {}),
      results,
      sent_count: sent,
      failed_count: failed,
    };
  }
  // sync_context of a team: one result per member, from every machine.
  const ok = answers.flatMap((a, i) => (a.status === "fulfilled" ? [{ p: parts[i]!, v: a.value }] : []));
  if (!ok.length) throw toSessionError((answers[0] as PromiseRejectedResult).reason);
  const results = ok.flatMap(({ p, v }) => rowsOf(p, v.results ?? [v]));
  answers.forEach((a, i) => {
    if (a.status === "rejected") {
      const e = toSessionError(a.reason);
      for (const m of parts[i]!.members)
        results.push({
          session_id: m.session_id,
          synced_at: new Date().toISOString(),
          context_type: String(args.context_type ?? "all"),
          sent: false,
          error: { code: e.code, message: e.message },
          node: parts[i]!.node,
        });
    }
  });
  const { session_id: _s, node: _n, ...first } = ok[0]!.v;
  return { ...first, results, sent: results.some((r) => r.sent === true) };
}

/** wait_for_sessions over parts: all (every part done) or any (the first part done; the others' states read at once). */
async function waitParts(
  c: Coordinator,
  tool: Tool,
  svc: SessionService,
  parts: Part[],
  args: Args,
  ctx: CallContext,
): Promise<Args> {
  const t0 = Date.now();
  const { ctxs, abort } = children(ctx, parts.length);
  const answers: Array<Args | undefined> = parts.map(() => undefined);
  let failure: unknown;
  await new Promise<void>((resolve) => {
    let left = parts.length;
    parts.forEach((p, i) => {
      run(c, tool, svc, p, p.args, ctxs[i]!).then(
        (v) => {
          answers[i] = v;
          if (args.mode === "any" && v.done === true) abort();
          if (--left === 0) resolve();
        },
        (e: unknown) => {
          // A part cancelled because another one finished first is read again below; anything else ends the wait.
          if (!(args.mode === "any" && answers.some((a) => a?.done === true) && toSessionError(e).code === "CANCELLED")) {
            failure ??= e;
            abort();
          }
          if (--left === 0) resolve();
        },
      );
    });
  });
  if (failure && !ctx.signal?.aborted) throw failure;
  if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
  // mode any: the parts stopped early are read as they are now (timeout 0).
  await Promise.all(
    parts.map(async (p, i) => {
      if (!answers[i]) answers[i] = await run(c, tool, svc, p, { ...p.args, timeout_ms: 0 }, {});
    }),
  );
  const sessions = parts.flatMap((p, i) => rowsOf(p, answers[i]!.sessions));
  const dones = answers.map((a) => a!.done === true);
  const done = args.mode === "any" ? dones.some(Boolean) : dones.every(Boolean);
  return { mode: args.mode, done, timed_out: !done, waited_ms: Date.now() - t0, sessions };
}

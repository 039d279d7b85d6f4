/**
 * The history tools across nodes. list_conversations, search_conversations and get_execution_history ask this
 * machine and every node at once (each answers from its own transcript index and execution log), merge in the
 * local tool's order and mark every row from a node with `node`; a node that does not answer (the link's
 * NODE_UNREACHABLE, or no answer within NODE_HISTORY_TIMEOUT_MS) is left out and named in `nodes`, never failing
 * the call. get_conversation reads where `node` says, else here, else on the node that has the id (conversation ids
 * are Claude's, not the coordinator's: the nodes are asked). get_execution_history of one session goes to the
 * session's owner; resume_session adopting a conversation by its id goes to the machine that has it. Nothing from a
 * node is stored here: the merge is in memory, per call.
 *
 * Paging list_conversations across machines: a merged next_cursor is an offset into the merged order. A page at
 * offset o of size n asks each machine for its first o+n rows (paging each with its own cursor), merges them and
 * keeps rows o…o+n. Deep pages cost more (each asks for everything before them), which is what keeps the rows and
 * their order exact without any state here.
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { transcriptPath } from "../claude/transcript.js";
import type { CallContext } from "../core/context.js";
import { SessionError, toSessionError } from "../core/errors.js";
import { decodeCursor, encodeCursor } from "../history/rows.js";
import type { Tool } from "../server/tool.js";
import type { SessionService } from "../sessions/service.js";
import type { Args, Coordinator } from "./coordinator.js";
import { getConversationOutput } from "../api/index.js";
import { checkResult } from "./checks.js";
import { unreachable } from "./link.js";
import { LOCAL } from "./router.js";

/** A node that has not answered a history call within this is left out of the answer (and named). */
export const NODE_HISTORY_TIMEOUT_MS = 10_000;

/** One page of list_conversations asks a machine for at most this many rows per call (its own limit's maximum). */
const PAGE_MAX = 10_000;

interface NodeAnswer {
  name: string;
  status: "reachable" | "connecting" | "unreachable";
  error?: string;
}

type Call = (args: Args) => Promise<Args>;

/** What a node's answer is checked against: a tool's name and output schema. */
type Checkable = { name: string; output: z.ZodType };

interface Part<T> {
  node: string;
  value: T;
}

const mergedCursor = z.strictObject({ merged_offset: z.number().int().min(0) });

/**
 * `run` on every node at once, each given a call of the tool on that node; the answers of those that answered,
 * and every node's part (why one did not answer).
 */
async function everyNode<T>(
  c: Coordinator,
  tool: Checkable,
  ctx: CallContext,
  run: (call: Call) => Promise<T>,
): Promise<{ parts: Part<T>[]; nodes: NodeAnswer[] }> {
  const got = await Promise.all(
    [...c.links.values()].map(async (l) => {
      const ctl = new AbortController();
      const stop = () => ctl.abort();
      ctx.signal?.addEventListener("abort", stop, { once: true });
      const timer = setTimeout(stop, NODE_HISTORY_TIMEOUT_MS);
      try {
        // The abort ends the wait too while the link still waits for its first connection (ready() takes no signal).
        const aborted = new Promise<never>((_, reject) =>
          ctl.signal.addEventListener("abort", () => reject(new SessionError("TIMEOUT", "stopped")), { once: true }),
        );
        // Each answer checked against the tool's output schema (bad rows dropped) before it is merged.
        const value = await Promise.race([
          run(async (args) => checkResult(l.name, tool, await l.call(tool.name, args, { signal: ctl.signal })).value),
          aborted,
        ]);
        return { part: { node: l.name, value }, view: { name: l.name, status: "reachable" } as NodeAnswer };
      } catch (e) {
        if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
        const timedOut = ctl.signal.aborted;
        const err = toSessionError(e);
        const down = timedOut || err.code === "NODE_UNREACHABLE";
        const status = l.shownStatus === "connecting" ? "connecting" : down ? "unreachable" : l.shownStatus;
        const error = timedOut ? `node ${l.name} did not answer within ${NODE_HISTORY_TIMEOUT_MS} ms` : err.message;
        return { view: { name: l.name, status, error } as NodeAnswer };
      } finally {
        clearTimeout(timer);
        ctx.signal?.removeEventListener("abort", stop);
      }
    }),
  );
  return { parts: got.flatMap((g) => (g.part ? [g.part] : [])), nodes: got.map((g) => g.view) };
}

/** Rows of a machine's answer, a node's marked with it. */
function mark(node: string, rows: unknown): Args[] {
  return ((rows ?? []) as Args[]).map((r) => (node === LOCAL ? r : { ...r, node }));
}

/** Newest first by a time field (ISO strings); a stable sort, so ties keep this machine's rows, then the nodes' in order. */
function newestFirst(rows: Args[], field: string): Args[] {
  return rows.sort((a, b) => String(b[field] ?? "").localeCompare(String(a[field] ?? "")));
}

export async function historyCall(c: Coordinator, tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
  if (tool.name === "get_conversation") return readConversation(c, tool, svc, args, ctx);
  if (tool.name === "get_execution_history" && typeof args.session_id === "string") {
    // One session's turns: where the session is.
    const owner = await c.targetOf(svc, args);
    if (owner === LOCAL) return c.local(tool, svc, args, ctx);
    const v = checkResult(owner, tool, await c.linkOf(owner).call(tool.name, args, ctx)).value;
    return { ...v, executions: mark(owner, v.executions) };
  }
  if (!c.links.size) return c.local(tool, svc, args, ctx);
  if (tool.name === "list_conversations") return listConversations(c, tool, svc, args, ctx);
  const localCall: Call = (a) => c.local(tool, svc, a, ctx);
  const [local, { parts, nodes }] = await Promise.all([localCall(args), everyNode(c, tool, ctx, (call) => call(args))]);
  const all = [{ node: LOCAL, value: local }, ...parts];
  if (tool.name === "search_conversations") {
    const limit = args.limit as number;
    // Each machine's score, best first (its own index's ranking: comparable, not identical, across machines).
    const rows = all.flatMap((p) => mark(p.node, p.value.results)).sort((a, b) => (b.score as number) - (a.score as number));
    return {
      ...local,
      results: rows.slice(0, limit),
      examined: all.reduce((n, p) => n + (p.value.examined as number), 0),
      more_matches: rows.length > limit || all.some((p) => p.value.more_matches === true),
      indexing: all.some((p) => p.value.indexing === true),
      nodes,
    };
  }
  // get_execution_history of every session: newest ended first, `limit` of them.
  const rows = newestFirst(
    all.flatMap((p) => mark(p.node, p.value.executions)),
    "ended_at",
  );
  return {
    executions: rows.slice(0, args.limit as number),
    total_count: all.reduce((n, p) => n + (p.value.total_count as number), 0),
    nodes,
  };
}

/** A machine's first `want` conversations (paged with its own cursor), its first answer, and whether it has more. */
async function firstRows(call: Call, args: Args, want: number): Promise<{ first: Args; rows: Args[]; more: boolean }> {
  const rows: Args[] = [];
  let first: Args | undefined;
  let cursor: string | null = null;
  do {
    const page: Args = await call({ ...args, limit: Math.min(PAGE_MAX, want - rows.length), ...(cursor ? { cursor } : {}) });
    first ??= page;
    rows.push(...(page.conversations as Args[]));
    cursor = (page.next_cursor as string | null) ?? null;
  } while (cursor && rows.length < want);
  return { first: first!, rows, more: cursor !== null };
}

async function listConversations(c: Coordinator, tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
  const { cursor, limit: l, ...rest } = args;
  const limit = l as number;
  const offset = typeof cursor === "string" ? decodeCursor(cursor, mergedCursor).merged_offset : 0;
  const want = offset + limit;
  const [local, { parts, nodes }] = await Promise.all([
    firstRows((a) => c.local(tool, svc, a, ctx), rest, want),
    everyNode(c, tool, ctx, (call) => firstRows(call, rest, want)),
  ]);
  const all = [{ node: LOCAL, value: local }, ...parts];
  const rows = newestFirst(
    all.flatMap((p) => mark(p.node, p.value.rows)),
    "last_activity",
  );
  const more = rows.length > want || all.some((p) => p.value.more);
  return {
    ...local.first,
    conversations: rows.slice(offset, want),
    next_cursor: more ? encodeCursor({ merged_offset: want }) : null,
    total: all.reduce((n, p) => n + (p.value.first.total as number), 0),
    indexing: all.some((p) => p.value.first.indexing === true),
    nodes,
  };
}

/** One conversation: on the node named, else here, else on the first node (in nodes.json's order) that has it. */
async function readConversation(c: Coordinator, tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
  const onNode = (node: string, v: Args): Args => ({ ...v, conversation: { ...(v.conversation as Args), node } });
  const named = typeof args.node === "string" ? args.node : undefined;
  if (named === LOCAL) return c.local(tool, svc, args, ctx);
  if (named) return onNode(named, checkResult(named, tool, await c.linkOf(named).call(tool.name, withoutNode(args), ctx)).value);
  let missing: SessionError;
  try {
    return await c.local(tool, svc, args, ctx);
  } catch (e) {
    missing = toSessionError(e);
    if (missing.code !== "SESSION_NOT_FOUND" || !c.links.size) throw missing;
  }
  const { parts, nodes } = await everyNode(c, tool, ctx, (call) => call(withoutNode(args)));
  // nodes.json's order: the first node that has it.
  const hit = parts[0];
  if (hit) return onNode(hit.node, hit.value);
  const silent = nodes.filter((n) => n.status !== "reachable");
  if (silent.length)
    throw unreachable(
      silent.map((n) => n.name).join(", "),
      `conversation ${String(args.claude_session_id)} is on no machine that answers (${silent[0]!.error ?? "connecting"})`,
    );
  throw new SessionError(
    "SESSION_NOT_FOUND",
    `no conversation ${String(args.claude_session_id)} here or on any node (${nodes.map((n) => n.name).join(", ")})`,
    {
      ...(missing.suggestion ? { suggestion: missing.suggestion } : {}),
    },
  );
}

/**
 * resume_session {claude_session_id, cwd} (adopting a conversation, e.g. a search hit's `resume`) on a coordinator:
 * the machine that has the conversation adopts it — this one when a session of it is recorded here or its transcript
 * is here, else the first node (in nodes.json's order) whose index has it, else this one (whose error says why).
 */
export async function adoptWhereItIs(
  c: Coordinator,
  tool: Tool,
  svc: SessionService,
  args: Args,
  ctx: CallContext,
): Promise<Args> {
  const id = String(args.claude_session_id);
  const d = svc.deps;
  const recorded = Object.values((await d.store.read()).sessions).some((r) => r.claude_session_id === id);
  const here = recorded || (typeof args.cwd === "string" && existsSync(transcriptPath(d.cfg.claudeConfigDir, args.cwd, id)));
  if (here || !c.links.size) return c.local(tool, svc, args, ctx);
  const { parts } = await everyNode(c, { name: "get_conversation", output: getConversationOutput }, ctx, (call) =>
    call({ claude_session_id: id, limit: 1, max_chars: 100 }),
  );
  const hit = parts[0];
  return hit ? c.remote(hit.node, tool, args, ctx) : c.local(tool, svc, args, ctx);
}

function withoutNode(args: Args): Args {
  const { node: _n, ...rest } = args;
  return rest;
}

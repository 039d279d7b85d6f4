/**
 * The one view: list_sessions of this machine and of every node in one answer (rows marked with their node; an
 * unreachable node's last known rows marked node_status), and health_check with one check per node.
 */
import type { CallContext } from "../core/context.js";
import { statusGroup, type Status } from "../core/status.js";
import type { Tool } from "../server/tool.js";
import type { SessionService } from "../sessions/service.js";
import type { Args, Coordinator } from "./coordinator.js";
import { checkResult } from "./checks.js";
import { NODE_ANSWER_MS } from "./link.js";
import { LOCAL, type Row } from "./router.js";

interface NodeView {
  name: string;
  status: "reachable" | "connecting" | "unreachable";
  sessions: number;
  version?: string;
  error?: string;
}

function matches(r: Row, args: Args): boolean {
  const f = args.status_filter as string | undefined;
  if (f && f !== "all" && statusGroup(r.status as Status) !== f) return false;
  return !(typeof args.team_filter === "string" && r.team_name !== args.team_filter);
}

/** Rows the push keeps current are listings of every status in summary form; other listings ask the node. */
function servedFromRows(args: Args): boolean {
  return !args.include_metadata && !args.include_sensitive && !args.include_native;
}

/**
 * Rows older than this are listed again in the background: what no push tells of (a terminal gone unseen, a worktree
 * edited by hand).
 */
export const ROWS_MAX_AGE_MS = 10_000;

interface Part {
  rows: Row[];
  total: number;
  filtered: number;
  dropped: number;
  why?: string;
}

/**
 * A node whose link is up and which pushes its changes (SESSIONS_CHANGED): its rows as last listed, current to every
 * push it has sent (router.current: from memory, or after one listing when a push came since), filtered here.
 */
async function fromRows(c: Coordinator, node: string, args: Args): Promise<Part> {
  const all = await c.router.current(node);
  const listed = c.router.listedOf(node);
  if (listed && Date.now() - listed.at > ROWS_MAX_AGE_MS) c.router.refreshAfter(node);
  // Copies: the caller's answer is its own.
  const rows = all.filter((r) => matches(r, args)).map((r) => ({ ...r }));
  return {
    rows,
    total: listed?.total ?? all.length,
    filtered: rows.length,
    dropped: listed?.dropped ?? 0,
    ...(listed?.why ? { why: listed.why } : {}),
  };
}

/** Any other node (or listing): the same call on the node, bounded. */
async function fromNode(c: Coordinator, node: string, tool: Tool, args: Args, ctx: CallContext): Promise<Part> {
  const checked = checkResult(node, tool, await c.linkOf(node).call(tool.name, args, ctx, NODE_ANSWER_MS));
  const res = checked.value;
  const rows = (res.sessions as Row[]).map((r) => c.mark(node, r) as Row);
  // What an outage shows: a full listing of summaries only.
  if (args.status_filter === "all" && args.team_filter === undefined && servedFromRows(args)) c.router.remember(node, rows);
  return {
    rows,
    total: (res.total_count as number) - checked.dropped,
    filtered: (res.filtered_count as number) - checked.dropped,
    dropped: checked.dropped,
    ...(checked.why ? { why: checked.why } : {}),
  };
}

export async function listAll(c: Coordinator, tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
  const filter = typeof args.node_filter === "string" ? args.node_filter : undefined;
  if (filter && filter !== LOCAL) c.linkOf(filter);
  const { node_filter: _f, limit, ...rest } = args;
  const parts = Promise.all(
    [...c.links.values()]
      .filter((l) => !filter || filter === l.name)
      .map(async (l) => {
        try {
          // Bounded: a node that does not answer in time is shown with its last known rows, like one that is down.
          const part =
            l.status === "reachable" && l.pushes && servedFromRows(rest)
              ? await fromRows(c, l.name, rest)
              : await fromNode(c, l.name, tool, rest, ctx);
          // A bad row is left out and said here (and logged); the node's other rows are listed.
          const bad = part.dropped
            ? `${part.dropped} of its rows were not valid and are left out (${part.why ?? "not a session row"})`
            : undefined;
          if (bad) c.log.warn(`node ${l.name}: ${bad}`);
          const view: NodeView = {
            name: l.name,
            status: "reachable",
            sessions: part.rows.length,
            ...(l.version ? { version: l.version } : {}),
            ...(bad ? { error: bad } : {}),
          };
          return { ...part, view };
        } catch (e) {
          // Its last known sessions stay in the view, marked as such.
          const known = c.router.lastRows(l.name);
          const rows = known.filter((r) => matches(r, rest)).map((r) => ({ ...r, node_status: "unreachable" }));
          const view: NodeView = {
            name: l.name,
            status: l.shownStatus === "reachable" ? "unreachable" : l.shownStatus,
            sessions: rows.length,
            error: e instanceof Error ? e.message : String(e),
            ...(l.version ? { version: l.version } : {}),
          };
          return { rows, total: known.length, filtered: rows.length, view };
        }
      }),
  );
  // This machine's listing beside the nodes' (its own liveness read is a process: not after theirs).
  const local =
    !filter || filter === LOCAL ? await c.local(tool, svc, rest, ctx) : { sessions: [], total_count: 0, filtered_count: 0 };
  const done = await parts;
  const all = [...(local.sessions as Row[]), ...done.flatMap((p) => p.rows)];
  all.sort((a, b) => String(a.created_at ?? "").localeCompare(String(b.created_at ?? "")));
  // This machine's answer as it is (fields other tools add to it stay), with every machine's rows and counts.
  const out: Args = {
    ...local,
    sessions: typeof limit === "number" ? all.slice(0, limit) : all,
    total_count: (local.total_count as number) + done.reduce((n, p) => n + p.total, 0),
    filtered_count: (local.filtered_count as number) + done.reduce((n, p) => n + p.filtered, 0),
  };
  if (c.links.size) out.nodes = done.map((p) => p.view);
  return out;
}

export async function healthAll(c: Coordinator, tool: Tool, svc: SessionService, ctx: CallContext): Promise<Args> {
  const local = await c.local(tool, svc, {}, ctx);
  const checks = [...(local.checks as Array<{ name: string; status: string; detail: string }>)];
  const nodes = await Promise.all(
    [...c.links.values()].map(async (l) => {
      const name = `node ${l.name}`;
      if (l.status !== "reachable")
        return {
          name,
          status: "degraded",
          detail: `${l.shownStatus}: ${l.error ?? "connecting"} (its sessions keep running there)`,
        };
      try {
        const h = await l.call(tool.name, {}, ctx, NODE_ANSWER_MS);
        const hc = (h.checks ?? []) as Array<{ name: string; detail: string }>;
        const sessions = hc.find((x) => x.name === "sessions")?.detail;
        return {
          name,
          status: h.status === "ok" ? "ok" : "degraded",
          detail: `reachable, claude-sessions ${l.version ?? "?"}, status ${String(h.status)}${sessions ? `; ${sessions}` : ""}`,
        };
      } catch (e) {
        return { name, status: "degraded", detail: `no health answer: ${e instanceof Error ? e.message : String(e)}` };
      }
    }),
  );
  checks.push(...nodes);
  // A node that is down does not stop sessions here: it degrades the answer, never makes it down. A local warn
  // leaves the status as the local answer has it (warn does not change the overall status).
  const status =
    local.status === "down" ? "down" : local.status === "degraded" || nodes.some((x) => x.status !== "ok") ? "degraded" : "ok";
  // The local result's other fields (member_socket) as they are.
  return { ...local, status, checks };
}

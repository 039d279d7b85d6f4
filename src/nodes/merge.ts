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

export async function listAll(c: Coordinator, tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
  const filter = typeof args.node_filter === "string" ? args.node_filter : undefined;
  if (filter && filter !== LOCAL) c.linkOf(filter);
  const { node_filter: _f, limit, ...rest } = args;
  const local =
    !filter || filter === LOCAL ? await c.local(tool, svc, rest, ctx) : { sessions: [], total_count: 0, filtered_count: 0 };
  const whole = rest.status_filter === "all" && rest.team_filter === undefined;
  const parts = await Promise.all(
    [...c.links.values()]
      .filter((l) => !filter || filter === l.name)
      .map(async (l) => {
        try {
          // Bounded: a node that does not answer in time is shown with its last known rows, like one that is down.
          const checked = checkResult(l.name, tool, await l.call(tool.name, rest, ctx, NODE_ANSWER_MS));
          const res = checked.value;
          const rows = (res.sessions as Row[]).map((r) => c.mark(l.name, r) as Row);
          if (whole) c.router.remember(l.name, rows);
          // A bad row is left out and said here (and logged); the node's other rows are listed.
          const bad = checked.dropped
            ? `${checked.dropped} of its rows were not valid and are left out (${checked.why ?? "not a session row"})`
            : undefined;
          if (bad) c.log.warn(`node ${l.name}: ${bad}`);
          const view: NodeView = {
            name: l.name,
            status: "reachable",
            sessions: rows.length,
            ...(l.version ? { version: l.version } : {}),
            ...(bad ? { error: bad } : {}),
          };
          return {
            rows,
            total: (res.total_count as number) - checked.dropped,
            filtered: (res.filtered_count as number) - checked.dropped,
            view,
          };
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
  const all = [...(local.sessions as Row[]), ...parts.flatMap((p) => p.rows)];
  all.sort((a, b) => String(a.created_at ?? "").localeCompare(String(b.created_at ?? "")));
  // This machine's answer as it is (fields other tools add to it stay), with every machine's rows and counts.
  const out: Args = {
    ...local,
    sessions: typeof limit === "number" ? all.slice(0, limit) : all,
    total_count: (local.total_count as number) + parts.reduce((n, p) => n + p.total, 0),
    filtered_count: (local.filtered_count as number) + parts.reduce((n, p) => n + p.filtered, 0),
  };
  if (c.links.size) out.nodes = parts.map((p) => p.view);
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

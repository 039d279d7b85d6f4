/** `claude-sessions ls`: one line per session — node, id, status, backend, cost, cwd, attach command. */
import type * as api from "../api/index.js";
import { safeLine } from "../util/terminal-text.js";

type Row = api.ListOutput["sessions"][number];

function cost(s: Row): string {
  const c = "total_cost_usd" in s ? s.total_cost_usd : undefined;
  if (c === undefined) return "-";
  if (c === null) return "?"; // a model without a known price: never a guess
  return `$${c < 0.01 && c > 0 ? c.toFixed(4) : c.toFixed(2)}`;
}

/** The lines ls prints (a header first on a terminal); each field one line, its control characters escaped. */
export function lsLines(res: api.ListOutput, header: boolean): string[] {
  if (!res.sessions.length) return ["no sessions"];
  const rows = res.sessions.map((s) => [
    `${s.node ?? "local"}${s.node_status && s.node_status !== "reachable" ? ` (${s.node_status})` : ""}`,
    s.session_id,
    s.status,
    s.backend,
    cost(s),
    s.cwd,
    "attach_command" in s ? (s.attach_command ?? "") : "",
  ]);
  return [...(header ? [["NODE", "SESSION", "STATUS", "BACKEND", "COST", "CWD", "ATTACH"]] : []), ...rows].map((r) =>
    r.map(safeLine).join("\t"),
  );
}

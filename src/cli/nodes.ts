/** `claude-sessions nodes`: each configured node, reached once — its link, version, health and sessions. */
import type { SessionService } from "../sessions/service.js";
import { remoteAttachArgv as attachArgvOf } from "../nodes/attach.js";
import { capacityOf, type Coordinator } from "../nodes/coordinator.js";
import { NODE_ANSWER_MS } from "../nodes/link.js";
import { LOCAL } from "../nodes/router.js";
import { safeLine } from "../util/terminal-text.js";

export interface NodeLine {
  name: string;
  status: "reachable" | "unreachable";
  version?: string;
  health?: string;
  live?: number;
  max?: number;
  error?: string;
}

/** Connects every node (they are started here), asks each for its health and returns one line per node. */
export async function nodeReport(c: Coordinator): Promise<NodeLine[]> {
  c.start();
  return Promise.all(
    [...c.links.values()].map(async (l): Promise<NodeLine> => {
      try {
        await l.ready();
        const h = await l.call("health_check", {}, {}, 2 * NODE_ANSWER_MS);
        const cap = capacityOf(h);
        const sessions = ((h.checks ?? []) as Array<{ name: string; detail: string }>).find((x) => x.name === "sessions")?.detail;
        const live = sessions ? Number(/(\d+) live/.exec(sessions)?.[1]) : undefined;
        return {
          name: l.name,
          status: "reachable",
          ...(l.version ? { version: l.version } : {}),
          health: String(h.status),
          ...(live !== undefined && cap ? { live, max: live + cap.free } : {}),
        };
      } catch (e) {
        return { name: l.name, status: "unreachable", error: e instanceof Error ? e.message : String(e) };
      }
    }),
  );
}

/**
 * One line per node; what the node said (its version, health, error) with its control characters escaped. A node
 * whose version is not `mine` (this coordinator's) says so at the end of its line.
 */
export function formatNodeLine(n: NodeLine, mine?: string): string {
  if (n.status !== "reachable") return `${safeLine(n.name)}\tunreachable\t${safeLine(n.error ?? "")}`;
  const differs = mine !== undefined && n.version !== mine ? `\tversion differs from this machine's ${safeLine(mine)}` : "";
  return (
    `${safeLine(n.name)}\treachable\tclaude-sessions ${safeLine(n.version ?? "?")}\thealth ${safeLine(n.health ?? "?")}` +
    `${n.live !== undefined ? `\t${n.live} live of ${n.max}` : ""}${differs}`
  );
}

/**
 * `claude-sessions attach <id>` for a session on a node: the node's attach prefix and a tmux attach of `=cs-<id>` on
 * the node's socket, as argv (undefined when no node has the session). Throws when the node cannot be attached to (no
 * prefix, not a plain tmux attach).
 */
export async function remoteAttachArgv(c: Coordinator, svc: SessionService, id: string): Promise<string[] | undefined> {
  if (!c.links.size) return undefined;
  c.start();
  const owner = await c.router.ownerOf(id, svc);
  if (!owner || owner === LOCAL) return undefined;
  const link = c.linkOf(owner);
  const res = await link.call("list_sessions", { status_filter: "all" }, {}, NODE_ANSWER_MS);
  const row = (res.sessions as Array<{ session_id: string; attach_command?: string }>).find((r) => r.session_id === id);
  if (!link.cfg.attach?.length)
    throw new Error(`session ${id} runs on node ${owner}, which has no "attach" prefix in nodes.json`);
  // The node's line is only read for its tmux socket; the argv is this server's own (the prefix, then tmux attach).
  const argv = row?.attach_command ? attachArgvOf(link.cfg.attach, row.attach_command, id) : undefined;
  if (!argv)
    throw new Error(
      `session ${id} on node ${owner} cannot be attached to (it is not a live tmux session, or the node's attach command ` +
        `is not a plain tmux attach; use tail or stream_output)`,
    );
  return argv;
}

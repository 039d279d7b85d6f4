/** `claude-sessions nodes`: each configured node, reached once — its link, version, health and sessions. */
import { capacityOf, withTimeout, type Coordinator } from "./coordinator.js";

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
        const h = await withTimeout(l.call("health_check", {}), 10_000);
        const cap = capacityOf(h);
        const sessions = ((h.checks ?? []) as Array<{ name: string; detail: string }>).find((x) => x.name === "sessions")?.detail;
        const live = sessions ? Number(/(\d+) live/.exec(sessions)?.[1]) : undefined;
        return { name: l.name, status: "reachable", ...(l.version ? { version: l.version } : {}), health: String(h.status), ...(live !== undefined && cap ? { live, max: live + cap.free } : {}) };
      } catch (e) {
        return { name: l.name, status: "unreachable", error: e instanceof Error ? e.message : String(e) };
      }
    }),
  );
}

export function formatNodeLine(n: NodeLine): string {
  if (n.status !== "reachable") return `${n.name}\tunreachable\t${n.error ?? ""}`;
  return `${n.name}\treachable\tclaude-sessions ${n.version ?? "?"}\thealth ${n.health ?? "?"}${n.live !== undefined ? `\t${n.live} live of ${n.max}` : ""}`;
}

/**
 * Which node owns a session id. Nothing is stored: the table is rebuilt from each node's list_sessions whenever its
 * link comes up (so a restarted coordinator loses nothing), learnt from the coordinator's own starts, and an id not
 * in it is looked up on every reachable node before a call is refused. The rows of the last listing of each node are
 * kept, so an unreachable node's sessions stay listed with their last known status.
 */
import { STATUSES } from "../core/status.js";
import type { SessionService } from "../sessions/service.js";
import type { Logger } from "../util/log.js";
import type { NodeLink } from "./link.js";

/** A row of a node's list_sessions (a summary, or the record view), with its node. */
export type Row = Record<string, unknown> & { session_id: string; node?: string };

export const LOCAL = "local";

export class Router {
  private readonly owner = new Map<string, string>();
  private readonly rows = new Map<string, Row[]>();
  private readonly refreshing = new Map<string, Promise<Row[]>>();

  constructor(
    readonly links: ReadonlyMap<string, NodeLink>,
    private readonly log: Logger,
  ) {}

  /** Records a session the coordinator placed on `node`. */
  learn(id: string, node: string): void {
    this.owner.set(id, node);
  }

  /**
   * A newer status of a node's session (from a call's result or a notice), so the last known rows stay exact
   * between listings: they are what an unreachable node's sessions show.
   */
  note(node: string, id: string, status: unknown): void {
    if (typeof status !== "string" || !(STATUSES as readonly string[]).includes(status)) return;
    const row = this.rows.get(node)?.find((r) => r.session_id === id);
    if (row) row.status = status;
  }

  /** The last rows a node listed (all statuses). */
  lastRows(node: string): Row[] {
    return this.rows.get(node) ?? [];
  }

  /** Replaces what is known of `node` with its rows (an answer of list_sessions with status_filter all). */
  remember(node: string, rows: Row[]): void {
    for (const [id, n] of this.owner) if (n === node) this.owner.delete(id);
    for (const r of rows) this.owner.set(r.session_id, node);
    this.rows.set(node, rows);
  }

  /** Lists every session of a reachable node (one at a time per node) and remembers them. */
  refresh(node: string): Promise<Row[]> {
    const running = this.refreshing.get(node);
    if (running) return running;
    const link = this.links.get(node);
    if (!link) return Promise.resolve([]);
    const p = link
      .call("list_sessions", { status_filter: "all" })
      .then((res) => {
        const rows = (res.sessions as Row[]).map((r) => ({ ...r, node }));
        this.remember(node, rows);
        return rows;
      })
      .finally(() => this.refreshing.delete(node));
    this.refreshing.set(node, p);
    return p;
  }

  /** Refreshes every reachable node (failures are logged: an unreachable node keeps its last rows). */
  async refreshAll(): Promise<void> {
    await Promise.all(
      [...this.links.values()]
        .filter((l) => l.status === "reachable" || !l.everUp)
        .map((l) => this.refresh(l.name).catch((e: unknown) => this.log.debug(`node ${l.name}: listing failed: ${String(e)}`))),
    );
  }

  /**
   * The node that owns `id`: "local" when this machine's store has it, a node name, or undefined when nobody
   * knows it (after asking every reachable node again).
   */
  async ownerOf(id: string, svc: SessionService): Promise<string | undefined> {
    if (await svc.deps.store.get(id)) return LOCAL;
    const known = this.owner.get(id);
    if (known) return known;
    await this.refreshAll();
    return this.owner.get(id);
  }
}

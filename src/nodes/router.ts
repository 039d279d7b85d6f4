/**
 * Which node owns a session id. Nothing is stored: the table is rebuilt from each node's list_sessions whenever its
 * link comes up (so a restarted coordinator loses nothing), learnt from the coordinator's own starts, and an id not
 * in it is looked up on every reachable node before a call is refused. The rows of the last listing of each node are
 * kept, so an unreachable node's sessions stay listed with their last known status. A change of which sessions a
 * node has, or of which of them are live, is told to onChange's listeners (resources/list_changed).
 */
import { isLive, STATUSES, type Status } from "../core/status.js";
import type { SessionService } from "../sessions/service.js";
import type { Logger } from "../util/log.js";
import { listOutput } from "../api/index.js";
import { checkResult } from "./checks.js";
import { NODE_ANSWER_MS, type NodeLink } from "./link.js";

const LISTING = { name: "list_sessions", output: listOutput };

/** A row of a node's list_sessions (a summary, or the record view), with its node. */
export type Row = Record<string, unknown> & { session_id: string; node?: string };

export const LOCAL = "local";

/** A node's rows as last listed in full: when, the push count they are current to, and the node's own counts. */
export interface Listed {
  at: number;
  gen: number;
  total: number;
  /** Rows of its answer left out (not valid), and why. */
  dropped: number;
  why?: string;
}

export class Router {
  private readonly owner = new Map<string, string>();
  private readonly rows = new Map<string, Row[]>();
  private readonly refreshing = new Map<string, { p: Promise<Row[]>; gen: number }>();
  /** Per node: how many times it said its sessions changed (SESSIONS_CHANGED, list_changed, its link coming up). */
  private readonly pushed = new Map<string, number>();
  private readonly listed = new Map<string, Listed>();
  private readonly staleListeners = new Set<() => void>();
  private readonly queued = new Set<string>();
  /** Per node: its sessions' ids and liveness, to tell a change from a listing that found the same. */
  private readonly shape = new Map<string, string>();
  private readonly changes = new Set<() => void>();

  constructor(
    readonly links: ReadonlyMap<string, NodeLink>,
    private readonly log: Logger,
    /** A node's row as this server shows it (its node, its attach_command rebuilt here). */
    private readonly mark: (node: string, row: Row) => Row = (node, r) => ({ ...r, node }),
  ) {}

  /** Forgets where a session is (it moved): the next call naming it looks again. */
  forget(id: string): void {
    const node = this.owner.get(id);
    this.owner.delete(id);
    if (!node) return;
    const rows = this.rows.get(node);
    if (rows?.some((r) => r.session_id === id)) {
      this.rows.set(
        node,
        rows.filter((r) => r.session_id !== id),
      );
      this.changed(node);
    }
  }

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
    if (!row) return;
    row.status = status;
    this.changed(node);
  }

  /** Listens for changes of the nodes' sessions (started, ended, gone); returns the unsubscribe. */
  onChange(l: () => void): () => void {
    this.changes.add(l);
    return () => this.changes.delete(l);
  }

  private changed(node: string): void {
    const rows = this.rows.get(node) ?? [];
    const shape = rows
      .map((r) => `${r.session_id}:${isLive(r.status as Status) ? 1 : 0}`)
      .sort()
      .join(",");
    if ((this.shape.get(node) ?? "") === shape) return;
    this.shape.set(node, shape);
    for (const l of [...this.changes]) l();
  }

  /**
   * `node` said its sessions changed (or its link came up): its rows are not current until it is listed again. Only
   * a full listing started after this makes them current (current()).
   */
  stale(node: string): void {
    this.pushed.set(node, (this.pushed.get(node) ?? 0) + 1);
    for (const l of [...this.staleListeners]) l();
  }

  /** Listens for stale(): any node's rows may have changed. */
  onStale(l: () => void): () => void {
    this.staleListeners.add(l);
    return () => this.staleListeners.delete(l);
  }

  /** When and to what the node's rows were last listed in full (undefined: never). */
  listedOf(node: string): Listed | undefined {
    return this.listed.get(node);
  }

  /**
   * The node's rows, current to every change it has pushed so far: from memory when no push came since its last
   * full listing, else after a listing started since that push (the one in flight, or a new one). Throws what the
   * listing throws (the node is silent or unreachable).
   */
  async current(node: string): Promise<Row[]> {
    if (!this.links.has(node)) return [];
    const want = this.pushed.get(node) ?? 0;
    while ((this.listed.get(node)?.gen ?? -1) < want) {
      const running = this.refreshing.get(node);
      if (!running) await this.refresh(node);
      else if (running.gen >= want) await running.p;
      else await running.p.catch(() => {});
    }
    return this.lastRows(node);
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
    this.changed(node);
  }

  /**
   * Lists a node again once the listing in flight (if any) is over: the node said its sessions changed, and a
   * listing already under way may have been answered before that change.
   */
  refreshAfter(node: string): void {
    const fail = (e: unknown) => this.log.debug(`node ${node}: listing failed: ${String(e)}`);
    const running = this.refreshing.get(node)?.p;
    if (!running) return void this.refresh(node).catch(fail);
    if (this.queued.has(node)) return;
    this.queued.add(node);
    void running
      .catch(() => {})
      .then(() => {
        this.queued.delete(node);
        return this.refresh(node);
      })
      .catch(fail);
  }

  /** Lists every session of a reachable node (one at a time per node) and remembers them. */
  refresh(node: string): Promise<Row[]> {
    const running = this.refreshing.get(node);
    if (running) return running.p;
    const link = this.links.get(node);
    if (!link) return Promise.resolve([]);
    // The pushes this listing answers for: those before it is sent (the node reads its state after it arrives).
    const gen = this.pushed.get(node) ?? 0;
    const at = Date.now();
    const p = link
      .call("list_sessions", { status_filter: "all" }, {}, NODE_ANSWER_MS)
      .then((res) => {
        // What becomes routes and resource URIs: only rows that are sessions (a bad one is left out).
        const checked = checkResult(node, LISTING, res);
        if (checked.dropped)
          this.log.debug(`node ${node}: ${checked.dropped} rows of its listing left out (${checked.why ?? "not valid"})`);
        const rows = (checked.value.sessions as Row[]).map((r) => this.mark(node, r));
        this.remember(node, rows);
        const total = typeof checked.value.total_count === "number" ? checked.value.total_count - checked.dropped : rows.length;
        this.listed.set(node, { at, gen, total, dropped: checked.dropped, ...(checked.why ? { why: checked.why } : {}) });
        return rows;
      })
      .finally(() => this.refreshing.delete(node));
    this.refreshing.set(node, { p, gen });
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
    const mine = await svc.deps.store.get(id);
    // A move's uncommitted copy here is not this machine's session yet.
    if (mine && !mine.incoming) return LOCAL;
    const known = this.owner.get(id);
    if (known) return known;
    // Every reachable node is listed again, and the first that has the id answers: a node that is slow to answer
    // (up to its 5 s bound) holds up only the calls for ids nobody else has, never a session another node runs.
    const links = [...this.links.values()].filter((l) => l.status === "reachable" || !l.everUp);
    await new Promise<void>((resolve) => {
      let left = links.length;
      if (!left) return resolve();
      for (const l of links) {
        void this.refresh(l.name)
          .catch((e: unknown) => this.log.debug(`node ${l.name}: listing failed: ${String(e)}`))
          .finally(() => {
            left--;
            if (this.owner.has(id) || left === 0) resolve();
          });
      }
    });
    return this.owner.get(id);
  }
}

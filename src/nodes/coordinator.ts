/**
 * The coordinator: the layer above the session service that makes every tool work across nodes. A call that names a
 * session (session_id, or team_name + teammate_name) goes to the node that owns it — this machine's service as
 * before, or an MCP tools/call to the node with the same validated arguments; start_session and run_task go where
 * `node` says; list_sessions, health_check, the team tools (broadcast_message, wait_for_sessions, sync_context
 * of a team) and the history tools (history.ts) ask every node and merge. Which of these a tool is, its declaration
 * says (`route`, server/tool.ts): a new tool that takes a session id declares route "session" and needs no code here.
 */
import { freemem } from "node:os";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../core/context.js";
import { SessionError } from "../core/errors.js";
import { isLive, type Status } from "../core/status.js";
import type { CallRouter, Invoked, RemoteSession, Tool } from "../server/tool.js";
import type { SessionService } from "../sessions/service.js";
import { newSessionId } from "../sessions/launch/options.js";
import type { Logger } from "../util/log.js";
import { remoteAttach } from "./attach.js";
import type { NodeConfig } from "./config.js";
import { fanOut, groupOf } from "./fanout.js";
import { checkNotice, checkResult, keysOf } from "./checks.js";
import { DEFAULT_TIMINGS, NODE_ANSWER_MS, NodeLink, unreachable, type LinkTimings } from "./link.js";
import { Bucket, NOTICE_RATE } from "./rate.js";
import { adoptWhereItIs, historyCall } from "./history.js";
import { healthAll, listAll } from "./merge.js";
import { LOCAL, Router, type Row } from "./router.js";
import { moveSession, recoverMoves } from "./move.js";
import { verifiedCapacity } from "./room.js";
import { wakeAnywhere } from "./wake.js";

export { capacityOf, NODE_MEM_MAX_MIB, NODE_SLOTS_MAX, verifiedCapacity } from "./room.js";

export type Args = Record<string, unknown>;

function withoutNode(args: Args): Args {
  const { node: _n, node_filter: _f, ...rest } = args;
  return rest;
}

const LEVELS = new Set<LoggingLevel>(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);

type NoticeListener = (level: LoggingLevel, data: Record<string, unknown>) => void;

export class Coordinator implements CallRouter {
  readonly links = new Map<string, NodeLink>();
  readonly router: Router;
  private readonly notices = new Set<NoticeListener>();
  private readonly updates = new Set<(uri: string) => void>();
  /** Per node: how many notices and updates it may still make this server send (rate.ts). */
  private readonly buckets = new Map<string, Bucket>();
  private readonly dropReports = new Map<string, NodeJS.Timeout>();
  /** This machine's service, for the moves a killed coordinator left (move.ts); set by app.ts. */
  private svc?: SessionService;
  closed = false;

  constructor(
    nodes: readonly NodeConfig[],
    readonly log: Logger,
    version = "0.0.0",
    timings: LinkTimings = DEFAULT_TIMINGS,
  ) {
    for (const n of nodes) {
      const link = new NodeLink(
        n,
        log,
        {
          notice: (node, level, data) => this.notice(node, level, data),
          resourceUpdated: (node, uri) => {
            if (!this.admit(node)) return;
            for (const l of [...this.updates]) l(uri);
          },
          // A session there started or ended: its rows again (resources/list and what an outage shows).
          // Within its rate (past it, the one listing after the flood stands for all).
          listChanged: (node) => {
            this.router.stale(node);
            if (this.admit(node)) this.router.refreshAfter(node);
          },
          // A row there changed: the next listing asks the node again (merge.ts); not rate-limited, as it costs
          // nothing here and the node sends it once per listing.
          sessionsChanged: (node) => this.router.stale(node),
          // Routes are rebuilt from the node itself each time its link comes up: the coordinator stores none.
          up: (node) => {
            this.router.stale(node);
            void this.router
              .refresh(node)
              .catch((e: unknown) => log.warn(`node ${node}: listing its sessions failed: ${String(e)}`));
          },
        },
        timings,
        version,
      );
      this.links.set(n.name, link);
    }
    this.router = new Router(this.links, log, (node, r) => this.mark(node, r) as Row);
  }

  /** This machine's service: moves left unfinished are resolved once the links start. */
  useService(svc: SessionService): void {
    this.svc = svc;
  }

  start(): void {
    for (const l of this.links.values()) l.start();
    if (this.svc && this.links.size)
      void recoverMoves(this, this.svc).catch((e: unknown) => this.log.warn(`resolving unfinished moves: ${String(e)}`));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.dropReports.values()) clearTimeout(t);
    this.dropReports.clear();
    await Promise.all([...this.links.values()].map((l) => l.close()));
  }

  /** The link of a configured node, or INVALID_ARGUMENT naming the configured ones. */
  linkOf(name: string): NodeLink {
    const l = this.links.get(name);
    if (l) return l;
    const names = [...this.links.keys()];
    throw new SessionError("INVALID_ARGUMENT", `there is no node named ${JSON.stringify(name)}.`, {
      suggestion: names.length
        ? `The nodes are: local, auto, ${names.join(", ")}.`
        : "This server has no nodes configured (CLAUDE_SESSIONS_NODES or <state>/nodes.json); leave node out.",
    });
  }

  onNotice(l: NoticeListener): () => void {
    this.notices.add(l);
    return () => this.notices.delete(l);
  }

  /**
   * Whether one more notice or update of `node` may reach the clients. Past its rate the rest are dropped: once the
   * flood has stopped for a second, the count is logged and the node is listed again (the statuses the dropped
   * notices carried).
   */
  private admit(node: string): boolean {
    let b = this.buckets.get(node);
    if (!b) this.buckets.set(node, (b = new Bucket()));
    if (b.take()) return true;
    const pending = this.dropReports.get(node);
    if (pending) clearTimeout(pending);
    const t = setTimeout(() => {
      this.dropReports.delete(node);
      this.log.warn(`node ${node}: ${b.takeDropped()} notices dropped (more than ${NOTICE_RATE} a second)`);
      this.router.refreshAfter(node);
    }, 1000);
    t.unref();
    this.dropReports.set(node, t);
    return false;
  }

  private notice(node: string, level: LoggingLevel, data: unknown): void {
    // Only a notice in this server's own shape is passed on (a hostile node's text stays within its fields).
    const checked = checkNotice(data);
    if (!checked) return void this.log.debug(`node ${node}: a notice that is not one was dropped`);
    if (!this.admit(node)) return;
    const d: Record<string, unknown> = { ...checked, node };
    const id = d.session_id as string;
    this.router.learn(id, node);
    this.router.note(node, id, d.status);
    for (const l of [...this.notices]) l(LEVELS.has(level) ? level : "info", d);
  }

  async invoke<R>(tool: Tool<R>, svc: SessionService, raw: unknown, ctx: CallContext): Promise<Invoked<R>> {
    const parsed = tool.input.safeParse(raw);
    if (!parsed.success) return { ok: false, error: parsed.error };
    // A result from another machine (or merged from several) comes as JSON: the caller (server/call.ts) checks it
    // against the tool's output schema before anyone reads it.
    return { ok: true, value: (await this.dispatch(tool, svc, parsed.data as Args, ctx)) as R };
  }

  /** By the route the tool's declaration names (server/tool.ts). */
  private async dispatch(tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<unknown> {
    switch (tool.route) {
      case "listing":
        return listAll(this, tool, svc, args, ctx);
      case "health":
        return healthAll(this, tool, svc, ctx);
      case "history":
        return historyCall(this, tool, svc, args, ctx);
      case "placed":
        return this.place(tool, svc, args, ctx);
      case "local":
        return this.local(tool, svc, args, ctx);
      case "move":
        // No nodes: the tool's own answer (nowhere to move to), with its arguments as given (`node` is its target).
        if (!this.links.size) {
          const res = await tool.invoke(svc, args, ctx);
          if (!res.ok) throw new SessionError("INVALID_ARGUMENT", `invalid arguments for ${tool.name}: ${res.error.message}`);
          return res.value;
        }
        return moveSession(this, svc, args as { session_id: string; node: string }, ctx);
      case "adopt":
        if (args.session_id === undefined && args.teammate_name === undefined && typeof args.claude_session_id === "string")
          return adoptWhereItIs(this, tool, svc, args, ctx);
        break;
      case "group": {
        const group = groupOf(tool, args);
        if (group && this.links.size) return fanOut(this, tool, svc, args, ctx, group);
        break;
      }
      case "wake":
        // wake_anywhere: a hibernated session on a full machine moves to the one with room first (wake.ts).
        if (svc.deps.cfg.wakeAnywhere && this.links.size && typeof args.session_id === "string") {
          const arrived = await wakeAnywhere(this, svc, args.session_id, ctx);
          try {
            return await this.owned(tool, svc, args, ctx);
          } finally {
            arrived();
          }
        }
        break;
      case "session":
        break;
    }
    return this.owned(tool, svc, args, ctx);
  }

  /** A call that names one session, run on the machine that has it. */
  private async owned(tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
    const target = await this.targetOf(svc, args);
    return target === LOCAL ? this.local(tool, svc, args, ctx) : this.remote(target, tool, args, ctx);
  }

  /** This machine's session service, as if there were no nodes. */
  async local(tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<Args> {
    const res = await tool.invoke(svc, withoutNode(args), ctx);
    if (!res.ok) throw new SessionError("INVALID_ARGUMENT", `invalid arguments for ${tool.name}: ${res.error.message}`);
    return res.value as Args;
  }

  /** The same call on `node`, its result marked with the node. */
  async remote(node: string, tool: Tool, args: Args, ctx: CallContext): Promise<Args> {
    const raw = await this.linkOf(node).call(tool.name, withoutNode(args), ctx);
    // Checked against the tool's output schema before anything here reads it: bad rows dropped, the rest kept.
    const checked = checkResult(node, tool, raw);
    if (checked.dropped)
      this.log.warn(`node ${node}: ${checked.dropped} rows of its ${tool.name} answer dropped (${checked.why ?? "not valid"})`);
    const value = checked.value;
    if (typeof value.session_id === "string") {
      // A session the node made for this call (resume_session {fork}: a new id) is the node's.
      if (value.session_id !== args.session_id && value.status !== "not_found") this.router.learn(value.session_id, node);
      this.router.note(node, value.session_id, value.status ?? value.final_state);
    }
    return this.mark(node, value, keysOf(tool.output).has("node"));
  }

  /** A node's result or row: `node` on it (when its schema has the field) and attach_command through the node. */
  mark(node: string, value: Args, withNode = true): Args {
    const out: Args = { ...value };
    if (withNode) out.node = node;
    if (typeof out.attach_command === "string") {
      // Rebuilt here from the node's tmux socket and the session's id: none of the node's words is passed on.
      const a =
        typeof out.session_id === "string"
          ? remoteAttach(this.links.get(node)?.cfg.attach, out.attach_command, out.session_id)
          : undefined;
      if (a) out.attach_command = a;
      else delete out.attach_command;
    }
    return out;
  }

  /** Who runs a call that names one session: its owner (this machine when nobody else has it). */
  async targetOf(svc: SessionService, args: Args): Promise<string> {
    if (!this.links.size) return LOCAL;
    if (typeof args.session_id === "string") {
      const owner = await this.router.ownerOf(args.session_id, svc);
      if (owner) return owner;
      // Nobody reachable has it: when a node is down, it may well be there (say so, retryable), else not found here.
      const down = [...this.links.values()].filter((l) => l.status !== "reachable").map((l) => l.name);
      if (down.length)
        throw unreachable(
          down.join(", "),
          `session ${JSON.stringify(args.session_id)} is on no reachable machine, and ${down.length > 1 ? "these nodes do" : "this node does"} ` +
            `not answer (${this.links.get(down[0]!)?.error ?? "connecting"})`,
        );
      return LOCAL;
    }
    if (typeof args.team_name === "string" && typeof args.teammate_name === "string")
      return this.teammateOwner(svc, args.team_name, args.teammate_name);
    return LOCAL;
  }

  private async teammateOwner(svc: SessionService, team: string, mate: string): Promise<string> {
    const st = await svc.deps.store.read();
    const mine = Object.values(st.sessions).filter((r) => r.team_name === team && r.teammate_name === mate);
    if (mine.some((r) => isLive(r.status))) return LOCAL;
    await this.router.refreshAll();
    const theirs: Row[] = [...this.links.keys()]
      .flatMap((n) => this.router.lastRows(n))
      .filter((r) => r.team_name === team && r.teammate_name === mate);
    const live = theirs.find((r) => isLive(r.status as Status));
    if (live?.node) return live.node;
    if (mine.length) return LOCAL;
    return theirs[0]?.node ?? LOCAL;
  }

  /** start_session / run_task: on the node named, the best one (auto), or here. */
  private async place(tool: Tool, svc: SessionService, args: Args, ctx: CallContext): Promise<unknown> {
    const asked = typeof args.node === "string" ? args.node : LOCAL;
    const node = asked === "auto" ? await this.pick(svc) : asked;
    if (node !== LOCAL) this.linkOf(node);
    const id = typeof args.session_id === "string" ? args.session_id : undefined;
    if (id && this.links.size) {
      // Ids are unique across nodes: the same id again is only the idempotent start on the same node.
      const owner = await this.router.ownerOf(id, svc);
      if (owner && owner !== node)
        throw new SessionError(
          "INVALID_ARGUMENT",
          `session id ${JSON.stringify(id)} is already used on ${owner === LOCAL ? "this machine" : `node ${owner}`}.`,
          { suggestion: "Choose another session_id, or leave it out." },
        );
    }
    if (node === LOCAL) return this.local(tool, svc, args, ctx);
    let sid = id;
    while (!sid) {
      const fresh = newSessionId();
      if (!(await svc.deps.store.get(fresh)) && !this.router.lastRows(node).some((r) => r.session_id === fresh)) sid = fresh;
    }
    // A remote task must outlive the link's server process: tmux unless the caller chose otherwise.
    const forwarded: Args = {
      ...args,
      session_id: sid,
      ...(tool.name === "run_task" && args.backend === undefined ? { backend: "tmux" } : {}),
    };
    this.router.learn(sid, node);
    const out = await this.remote(node, tool, forwarded, ctx);
    // Its row joins the node's last known ones (what an outage shows) without waiting for the next listing.
    void this.router.refresh(node).catch(() => {});
    return out;
  }

  /**
   * node "auto": the reachable machine (this one included) with the most free slots, then the most free memory. A
   * node's own figures are not taken as they are: its live sessions are at least those this coordinator sees in a
   * fresh listing of it, its slots at most NODE_SLOTS_MAX, its memory at most NODE_MEM_MAX_MIB; a node that does not
   * answer both in time is left out.
   */
  async pick(svc: SessionService): Promise<string> {
    const st = await svc.deps.store.read();
    const live = Object.values(st.sessions).filter((r) => isLive(r.status)).length;
    const cands = [{ name: LOCAL, free: svc.deps.cfg.maxSessions - live, mem: freemem() / 1048576 }];
    await Promise.all(
      [...this.links.values()]
        .filter((l) => l.status === "reachable")
        .map(async (l) => {
          const [h, rows] = await Promise.all([
            l.call("health_check", {}, {}, NODE_ANSWER_MS).catch(() => undefined),
            this.router.refresh(l.name).catch(() => undefined),
          ]);
          const load = h && rows ? verifiedCapacity(h, rows.filter((r) => isLive(r.status as Status)).length) : undefined;
          if (load) cands.push({ name: l.name, ...load });
        }),
    );
    cands.sort((a, b) => b.free - a.free || b.mem - a.mem);
    return cands[0]!.name;
  }

  async subscribeResource(uri: string, id: string, svc: SessionService): Promise<boolean> {
    if (!this.links.size) return false;
    const owner = await this.router.ownerOf(id, svc);
    if (!owner || owner === LOCAL) return false;
    await this.linkOf(owner).subscribe(uri);
    return true;
  }

  onResourceUpdated(l: (uri: string) => void): () => void {
    this.updates.add(l);
    return () => this.updates.delete(l);
  }

  /**
   * Every node's sessions as last listed, for resources/list: no call is made, so a node that does not answer
   * costs nothing; its sessions are its last known rows (reachable false). The rows are kept current by the node's
   * resources/list_changed, each link coming up, list_sessions and the coordinator's own starts.
   */
  knownSessions(): RemoteSession[] {
    return [...this.links.values()].flatMap((l) =>
      this.router.lastRows(l.name).map((r) => ({
        session_id: r.session_id,
        node: l.name,
        status: String(r.status ?? ""),
        ...(typeof r.team_name === "string" ? { team_name: r.team_name } : {}),
        ...(typeof r.created_at === "string" ? { created_at: r.created_at } : {}),
        reachable: l.status === "reachable",
      })),
    );
  }

  onSessionsChanged(l: () => void): () => void {
    return this.router.onChange(l);
  }

  onRowsChanged(l: () => void): () => void {
    return this.router.onStale(l);
  }

  async readResource(
    uri: string,
    id: string,
    svc: SessionService,
  ): Promise<{ uri: string; mimeType?: string; text?: string }[] | undefined> {
    if (!this.links.size) return undefined;
    const owner = await this.router.ownerOf(id, svc);
    return !owner || owner === LOCAL ? undefined : this.linkOf(owner).readResource(uri);
  }
}

/**
 * One node's link: the operator's exec command spawned with MCP on its stdio (the SDK's Client over the transport
 * transport.ts opens), a heartbeat (MCP ping every second, answered within PING_TIMEOUT_MS) so a cut network is
 * seen in seconds rather than after a TCP time-out, and reconnection with back-off. On an outage every call in
 * flight fails at once with NODE_UNREACHABLE; calls made while the node is down fail the same way without waiting.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LoggingMessageNotificationSchema, ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema, type CallToolResult, type LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../core/context.js";
import { ERROR_CODES, SessionError, type ErrorCode } from "../core/errors.js";
import type { Logger } from "../util/log.js";
import type { NodeConfig } from "./config.js";
import { openTransport, type NodeTransport } from "./transport.js";

export type LinkStatus = "connecting" | "reachable" | "unreachable";

export interface LinkTimings {
  /** A ping every this often while the link is up. */
  heartbeatMs: number;
  /** A ping not answered within this is an outage. heartbeatMs + pingTimeoutMs bounds the detection time. */
  pingTimeoutMs: number;
  /** The exec command must have started the node's server and answered initialize within this. */
  connectTimeoutMs: number;
  /** Reconnection waits start here and double up to backoffMaxMs. */
  backoffMinMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_TIMINGS: LinkTimings = { heartbeatMs: 1000, pingTimeoutMs: 3000, connectTimeoutMs: 15_000, backoffMinMs: 250, backoffMaxMs: 2000 };

/**
 * Every call to a node is bounded: a node that answers pings but not a tool (hung, or hostile) costs a caller at
 * most this. A listing, a health check or a lookup (answered from memory on the node) gets NODE_ANSWER_MS; a forwarded
 * call its own timeout_ms plus NODE_GRACE_MS, or NODE_CALL_MS when it has none. Progress from the node (a turn it is
 * waiting on, a session starting) restarts the bound: the node is working, not silent.
 */
export const NODE_ANSWER_MS = 5000;
export const NODE_GRACE_MS = 15_000;
export const NODE_CALL_MS = 300_000;

/** The bound of a forwarded call with these arguments. */
export function callLimit(args: Record<string, unknown>): number {
  return typeof args.timeout_ms === "number" ? args.timeout_ms + NODE_GRACE_MS : NODE_CALL_MS;
}

/** The node answered nothing within the bound: retryable, like an outage (the link itself may still be up). */
export function silent(node: string, what: string, ms: number): SessionError {
  return new SessionError("NODE_UNREACHABLE", `node ${node} is unreachable: it did not answer ${what} within ${ms} ms`, { details: { node } });
}

export interface LinkEvents {
  /** The node's notifications/message (session notices), as it sent them. */
  notice?(node: string, level: LoggingLevel, data: unknown): void;
  /** The node's notifications/resources/updated of a URI this link subscribed to. */
  resourceUpdated?(node: string, uri: string): void;
  /** The node's notifications/resources/list_changed: one of its sessions started or ended, or went away. */
  listChanged?(node: string): void;
  /** The link came up (first time or after an outage). */
  up?(node: string): void;
  down?(node: string, why: string): void;
}

export function unreachable(node: string, why: string): SessionError {
  return new SessionError("NODE_UNREACHABLE", `node ${node} is unreachable: ${why}`, { details: { node } });
}

function cancelled(node: string): SessionError {
  return new SessionError("CANCELLED", "the request was cancelled; the node was told to stop it.", { details: { node } });
}

/** The node's own error result, as the same typed error here. */
function remoteError(node: string, res: CallToolResult): SessionError {
  const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
  try {
    const body = (JSON.parse(text) as { error: { code: string; message: string; suggestion?: string; details?: Record<string, unknown> } }).error;
    const known = (ERROR_CODES as readonly string[]).includes(body.code);
    return new SessionError(known ? (body.code as ErrorCode) : "INTERNAL", known ? body.message : `node ${node}: ${body.code}: ${body.message}`, {
      ...(body.suggestion ? { suggestion: body.suggestion } : {}),
      details: { ...body.details, node },
    });
  } catch {
    return new SessionError("INTERNAL", `node ${node} returned an error that is not claude-sessions': ${text.slice(0, 300)}`, { details: { node } });
  }
}

export class NodeLink {
  status: LinkStatus = "connecting";
  /** Why the link is down (the last failure). */
  error: string | undefined;
  /** The node's claude-sessions version (from initialize). */
  version: string | undefined;
  /** When the current outage was detected (for measurements). */
  downSince: number | undefined;
  /** Whether the link has ever been up (a first connection is waited for; a reconnection is not). */
  everUp = false;
  private client: Client | undefined;
  private transport: NodeTransport | undefined;
  private generation = 0;
  private attempt = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private pinging = false;
  private closed = false;
  private stderrTail = "";
  private readonly inflight = new Set<(e: SessionError) => void>();
  /** Resource URIs subscribed to on the node (again after each reconnection). */
  private readonly subscriptions = new Set<string>();
  private readonly changed = new Set<() => void>();

  constructor(
    readonly cfg: NodeConfig,
    private readonly log: Logger,
    private readonly events: LinkEvents = {},
    private readonly t: LinkTimings = DEFAULT_TIMINGS,
    private readonly clientVersion = "0.0.0",
  ) {}

  get name(): string {
    return this.cfg.name;
  }

  /** What a person is told: connecting before the first connection, then reachable or unreachable (retries included). */
  get shownStatus(): LinkStatus {
    return this.status === "reachable" ? "reachable" : this.everUp ? "unreachable" : this.status;
  }

  /** The exec command's process id while a link is open. */
  get pid(): number | undefined {
    return this.transport?.pid ?? undefined;
  }

  start(): void {
    void this.connect();
  }

  private setStatus(s: LinkStatus): void {
    this.status = s;
    for (const f of [...this.changed]) f();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const gen = ++this.generation;
    this.setStatus("connecting");
    // The SDK's client and the transport's module are loaded with the first link, not at every server's start (a
    // server without nodes never needs them).
    const [{ Client }, transport] = await Promise.all([import("@modelcontextprotocol/sdk/client/index.js"), openTransport(this.cfg)]);
    if (this.closed || gen !== this.generation) return;
    // The operator's command with what it needs of the environment (ssh SSH_AUTH_SOCK, kubectl KUBECONFIG, …), no secrets.
    this.stderrTail = "";
    transport.stderr?.on("data", (b: Buffer) => (this.stderrTail = (this.stderrTail + b.toString()).slice(-2000)));
    const client = new Client({ name: "claude-sessions-coordinator", version: this.clientVersion }, { capabilities: {} });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      if (gen === this.generation) this.events.notice?.(this.name, n.params.level, n.params.data);
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (gen === this.generation) this.events.resourceUpdated?.(this.name, n.params.uri);
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      if (gen === this.generation) this.events.listChanged?.(this.name);
    });
    transport.onclose = () => this.lost(gen, `its command exited${this.lastStderr()}`);
    transport.onerror = (e) => this.log.debug(`node ${this.name}: ${String(e)}`);
    this.transport = transport;
    this.client = client;
    try {
      await client.connect(transport, { timeout: this.t.connectTimeoutMs });
    } catch (e) {
      this.lost(gen, `it did not answer initialize (${e instanceof Error ? e.message : String(e)})${this.lastStderr()}`);
      return;
    }
    if (gen !== this.generation || this.closed) return;
    // Shown in nodes, logs and `claude-sessions nodes`: a version, or nothing.
    const v = client.getServerVersion()?.version;
    this.version = typeof v === "string" && /^[0-9A-Za-z.+_-]{1,64}$/.test(v) ? v : undefined;
    this.attempt = 0;
    this.error = undefined;
    this.downSince = undefined;
    this.everUp = true;
    this.setStatus("reachable");
    this.log.info(`node ${this.name}: reachable (claude-sessions ${this.version ?? "?"})`);
    this.heartbeat = setInterval(() => void this.beat(gen), this.t.heartbeatMs);
    this.heartbeat.unref();
    for (const uri of this.subscriptions) void client.subscribeResource({ uri }).catch((e: unknown) => this.log.debug(`node ${this.name}: resubscribing ${uri}: ${String(e)}`));
    this.events.up?.(this.name);
  }

  private lastStderr(): string {
    const line = this.stderrTail.trim().split("\n").pop()?.trim();
    return line ? `; it said: ${line.slice(0, 300)}` : "";
  }

  private async beat(gen: number): Promise<void> {
    if (this.pinging || gen !== this.generation) return;
    this.pinging = true;
    try {
      await this.client?.ping({ timeout: this.t.pingTimeoutMs });
    } catch (e) {
      this.lost(gen, `no answer to a ping within ${this.t.pingTimeoutMs} ms (${e instanceof Error ? e.message : String(e)})`);
    } finally {
      this.pinging = false;
    }
  }

  /** The link of generation `gen` is gone: fail what is in flight, end the command, try again later. */
  private lost(gen: number, why: string): void {
    if (gen !== this.generation) return;
    this.generation++;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    const wasUp = this.status === "reachable";
    this.error = why;
    this.downSince ??= Date.now();
    const err = unreachable(this.name, why);
    for (const fail of [...this.inflight]) fail(err);
    this.inflight.clear();
    this.endTransport();
    this.setStatus("unreachable");
    if (wasUp) this.log.warn(`node ${this.name}: unreachable (${why})`);
    else this.log.debug(`node ${this.name}: connection failed (${why})`);
    this.events.down?.(this.name, why);
    if (this.closed) return;
    const wait = Math.min(this.t.backoffMaxMs, this.t.backoffMinMs * 2 ** this.attempt++);
    this.retry = setTimeout(() => void this.connect(), wait);
    this.retry.unref();
  }

  private endTransport(): void {
    const tr = this.transport;
    this.transport = undefined;
    this.client = undefined;
    if (!tr) return;
    tr.onclose = undefined;
    // A hung ssh on a cut link does not end on stdin's close: signal it at once, then let close() reap it.
    const pid = tr.pid;
    if (pid) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        /* already gone */
      }
    }
    void tr.close().catch(() => {});
  }

  /** Resolves once the link is reachable; a first connection is waited for, an outage fails at once. */
  async ready(): Promise<Client> {
    if (this.status === "connecting" && !this.everUp) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, this.t.connectTimeoutMs);
        function done() {
          clearTimeout(t);
          off();
          resolve();
        }
        const f = () => this.status !== "connecting" && done();
        this.changed.add(f);
        const off = () => this.changed.delete(f);
      });
    }
    if (this.status === "reachable" && this.client) return this.client;
    throw unreachable(this.name, this.error ?? (this.closed ? "the coordinator is closing" : "it is still connecting"));
  }

  /**
   * Calls a tool on the node with the caller's progress and cancellation; the node's error result becomes the
   * same SessionError here, an outage NODE_UNREACHABLE at once, and no answer within `limitMs` of the link being up
   * (callLimit's bound unless given; progress restarts it) NODE_UNREACHABLE too, the node told to stop the call.
   */
  async call(name: string, args: Record<string, unknown>, ctx: CallContext = {}, limitMs = callLimit(args)): Promise<Record<string, unknown>> {
    const ctl = new AbortController();
    const stop = () => ctl.abort();
    ctx.signal?.addEventListener("abort", stop, { once: true });
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, limitMs);
    };
    // The bound starts once the link is up (a first connection is waited for, within connectTimeoutMs); the
    // caller's cancellation ends the wait for it too (ready() takes no signal).
    const ended = new Promise<never>((_, reject) => ctl.signal.addEventListener("abort", () => reject(timedOut ? silent(this.name, name, limitMs) : cancelled(this.name)), { once: true }));
    if (ctx.signal?.aborted) ctl.abort();
    try {
      const res = await Promise.race([this.forward(name, args, ctx, ctl.signal, arm, limitMs), ended]);
      if (res.isError) throw remoteError(this.name, res);
      return (res.structuredContent ?? {}) as Record<string, unknown>;
    } catch (e) {
      if (timedOut) throw silent(this.name, name, limitMs);
      throw e;
    } finally {
      if (timer) clearTimeout(timer);
      ctx.signal?.removeEventListener("abort", stop);
    }
  }

  private async forward(name: string, args: Record<string, unknown>, ctx: CallContext, signal: AbortSignal, alive: () => void, limitMs: number): Promise<CallToolResult> {
    const client = await this.ready();
    alive();
    return new Promise<CallToolResult>((resolve, reject) => {
      const fail = (e: SessionError) => reject(e);
      this.inflight.add(fail);
      const progress = ctx.progress;
      client
        .callTool({ name, arguments: args }, undefined, {
          // The bound is call()'s; the SDK's own time-out only backs it up.
          timeout: limitMs + 60_000,
          resetTimeoutOnProgress: true,
          signal,
          onprogress: (p) => {
            alive();
            progress?.({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) });
          },
        })
        .then(
          (r) => resolve(r as CallToolResult),
          (e: unknown) => {
            if (signal.aborted) reject(cancelled(this.name));
            else if (this.status !== "reachable") reject(unreachable(this.name, this.error ?? String(e)));
            else reject(new SessionError("INTERNAL", `node ${this.name}: ${e instanceof Error ? e.message : String(e)}`, { details: { node: this.name } }));
          },
        )
        .finally(() => this.inflight.delete(fail));
    });
  }

  /** Resource reads (session://…) on the node. */
  async readResource(uri: string): Promise<{ uri: string; mimeType?: string; text?: string }[]> {
    const client = await this.ready();
    const res = await client.readResource({ uri }, { timeout: 30_000 }).catch((e: unknown) => {
      throw this.status !== "reachable" ? unreachable(this.name, this.error ?? String(e)) : new SessionError("SESSION_NOT_FOUND", `node ${this.name}: ${e instanceof Error ? e.message : String(e)}`);
    });
    // Only the resource asked for, as text: anything else the node sends is left out.
    return (res.contents as Array<{ uri?: unknown; mimeType?: unknown; text?: unknown }>)
      .filter((c) => c.uri === uri && typeof c.text === "string")
      .map((c) => ({ uri, text: c.text as string, ...(typeof c.mimeType === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(c.mimeType) ? { mimeType: c.mimeType } : {}) }));
  }

  /** Subscribes to a resource on the node (kept across reconnections; updates arrive through resourceUpdated). */
  async subscribe(uri: string): Promise<void> {
    if (this.subscriptions.has(uri)) return;
    const client = await this.ready();
    await client.subscribeResource({ uri }, { timeout: 10_000 });
    this.subscriptions.add(uri);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.generation++;
    const tr = this.transport;
    this.transport = undefined;
    this.client = undefined;
    if (tr) {
      tr.onclose = undefined;
      await tr.close().catch(() => {});
    }
    for (const fail of [...this.inflight]) fail(unreachable(this.name, "the coordinator is closing"));
    this.setStatus("unreachable");
  }
}

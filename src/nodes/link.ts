/**
 * One node's link: the operator's exec command spawned with MCP on its stdio (the SDK's Client over the transport
 * transport.ts opens), a heartbeat (MCP ping every second, answered within PING_TIMEOUT_MS) so a cut network is
 * seen in seconds rather than after a TCP time-out, and reconnection with back-off. On an outage every call in
 * flight fails at once with NODE_UNREACHABLE; calls made while the node is down fail the same way without waiting.
 *
 * Reconnection is hedged: while the node is down a new attempt starts after each back-off (jittered, so nodes that
 * come back together are not all dialled in the same instant) even when earlier ones are still pending, and the
 * first to answer initialize wins. An attempt made while the network was cut hangs in TCP's retransmissions until
 * its own time-out (ssh's ConnectTimeout, else connectTimeoutMs: 15 s); waiting for it was why a node whose link
 * came back answered only after 17–19 s (15 s, then up to 2 s of back-off, then the server's start). A new attempt
 * starts at least every hedgeMs (1 s) while one is pending, at most maxAttempts (6) are pending, and the oldest makes
 * way only once it is older than stuckMs (6 s, doubled at each abandonment): a server that is slow to start still
 * gets its time. Only reconnections are hedged: a first connection (the coordinator starting, every node at once, the
 * machine busy) is one attempt at a time, so a node's slow start never becomes several servers starting side by
 * side on it (a server starting reconciles the state directory, and would race a session another one is starting).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { z } from "zod";
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type LoggingLevel,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallContext } from "../core/context.js";
import { ERROR_CODES, SessionError, type ErrorCode } from "../core/errors.js";
import { COORDINATOR_CLIENT } from "../server/mcp/hold.js";
import type { Logger } from "../util/log.js";
import { SESSIONS_CHANGED, SESSIONS_CHANGED_CAP } from "../server/mcp/sessions-changed.js";
import type { NodeConfig } from "./config.js";
import { openTransport, type NodeTransport, type OpenTransport } from "./transport.js";

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
  /** While the node is down, an attempt unanswered this long gets another beside it (hedged). */
  hedgeMs?: number;
  /** At most this many connection attempts pending at once. */
  maxAttempts?: number;
  /**
   * An attempt unanswered this long may be abandoned to make way for a new one (when maxAttempts are pending). It
   * doubles with each abandonment (up to connectTimeoutMs), so a node whose server is slow to start still gets the
   * time it needs; it is back to this after a connection.
   */
  stuckMs?: number;
}

export const DEFAULT_TIMINGS: LinkTimings = {
  heartbeatMs: 1000,
  pingTimeoutMs: 3000,
  connectTimeoutMs: 15_000,
  backoffMinMs: 250,
  // 1 s: a node whose link returns waits at most this (0.5–1 s) for its next attempt (it has 5 s to answer again).
  backoffMaxMs: 1000,
  hedgeMs: 1000,
  maxAttempts: 6,
  stuckMs: 6000,
};

/** A back-off wait with jitter: between half and all of min · 2^attempt, capped at max. */
export function backoff(t: Pick<LinkTimings, "backoffMinMs" | "backoffMaxMs">, attempt: number, random = Math.random): number {
  const full = Math.min(t.backoffMaxMs, t.backoffMinMs * 2 ** Math.min(attempt, 30));
  return Math.round(full * (0.5 + random() * 0.5));
}

/** A connection attempt in flight (not yet the link). */
interface Attempt {
  readonly started: number;
  transport?: NodeTransport;
  abandon(why: string): void;
}

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
  return new SessionError("NODE_UNREACHABLE", `node ${node} is unreachable: it did not answer ${what} within ${ms} ms`, {
    details: { node },
  });
}

export interface LinkEvents {
  /** The node's notifications/message (session notices), as it sent them. */
  notice?(node: string, level: LoggingLevel, data: unknown): void;
  /** The node's notifications/resources/updated of a URI this link subscribed to. */
  resourceUpdated?(node: string, uri: string): void;
  /** The node's notifications/resources/list_changed: one of its sessions started or ended, or went away. */
  listChanged?(node: string): void;
  /** The node's SESSIONS_CHANGED: a row of its listing changed since this link last listed it. */
  sessionsChanged?(node: string): void;
  /** The link came up (first time or after an outage). */
  up?(node: string): void;
  down?(node: string, why: string): void;
}

export function unreachable(node: string, why: string): SessionError {
  return new SessionError("NODE_UNREACHABLE", `node ${node} is unreachable: ${why}`, { details: { node } });
}

/** A node's SESSIONS_CHANGED (mcp/sessions-changed.ts); whatever params it has are not read. */
const SessionsChangedSchema = z.object({ method: z.literal(SESSIONS_CHANGED), params: z.optional(z.looseObject({})) });

function cancelled(node: string): SessionError {
  return new SessionError("CANCELLED", "the request was cancelled; the node was told to stop it.", { details: { node } });
}

/** The node's own error result, as the same typed error here. */
function remoteError(node: string, res: CallToolResult): SessionError {
  const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
  try {
    const body = (
      JSON.parse(text) as { error: { code: string; message: string; suggestion?: string; details?: Record<string, unknown> } }
    ).error;
    const known = (ERROR_CODES as readonly string[]).includes(body.code);
    return new SessionError(
      known ? (body.code as ErrorCode) : "INTERNAL",
      known ? body.message : `node ${node}: ${body.code}: ${body.message}`,
      {
        ...(body.suggestion ? { suggestion: body.suggestion } : {}),
        details: { ...body.details, node },
      },
    );
  } catch {
    return new SessionError("INTERNAL", `node ${node} returned an error that is not claude-sessions': ${text.slice(0, 300)}`, {
      details: { node },
    });
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
  /** Whether the node of the current link pushes SESSIONS_CHANGED (it declared the capability): its rows may be kept. */
  pushes = false;
  private client: Client | undefined;
  private transport: NodeTransport | undefined;
  private generation = 0;
  private attempt = 0;
  /** The current stuckMs (doubled by each abandonment, reset by a connection). */
  private stuck = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private pinging = false;
  private closed = false;
  /** Connection attempts in flight (none while the link is up). */
  private readonly attempts = new Set<Attempt>();
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
    /** How a transport to the node is made (tests: the SDK's in-memory pair). */
    private readonly open: OpenTransport = openTransport,
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

  /** How many connection attempts are in flight (0 while the link is up). */
  get pendingAttempts(): number {
    return this.attempts.size;
  }

  start(): void {
    this.dial();
  }

  private setStatus(s: LinkStatus): void {
    this.status = s;
    for (const f of [...this.changed]) f();
  }

  /** How long an unanswered attempt is waited for before another is started beside it. */
  private get hedgeMs(): number {
    return this.t.hedgeMs ?? this.t.connectTimeoutMs;
  }

  /**
   * Starts a connection attempt unless one started less than hedgeMs ago (then it waits for that one, and tries
   * again when it has had its time). At maxAttempts pending the oldest is abandoned if it is older than the stuck
   * bound, and otherwise the new one waits.
   */
  private dial(): void {
    if (this.closed || this.status === "reachable") return;
    const now = Date.now();
    const pending = [...this.attempts].sort((x, y) => x.started - y.started);
    const newest = pending[pending.length - 1];
    // A first connection is never hedged: its attempt is waited for (or fails, and the next is scheduled then).
    if (newest && !this.everUp) return;
    if (newest && now - newest.started < this.hedgeMs) return this.schedule(this.hedgeMs - (now - newest.started));
    if (pending.length >= (this.t.maxAttempts ?? 1)) {
      const oldest = pending[0]!;
      this.stuck ||= this.t.stuckMs ?? this.t.connectTimeoutMs;
      if (now - oldest.started < this.stuck) return this.schedule(this.stuck - (now - oldest.started));
      this.stuck = Math.min(this.t.connectTimeoutMs, this.stuck * 2);
      oldest.abandon(`no answer within ${now - oldest.started} ms`);
    }
    void this.connect();
    this.schedule(this.hedgeMs);
  }

  /** The next dial: after the back-off (jittered), and not before `minMs` (itself jittered by up to a quarter). */
  private schedule(minMs: number): void {
    if (this.closed || this.status === "reachable") return;
    if (this.retry) clearTimeout(this.retry);
    const wait = Math.max(Math.round(minMs * (0.75 + Math.random() * 0.25)), backoff(this.t, this.attempt++));
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.dial();
    }, wait);
    this.retry.unref();
  }

  /** One connection attempt: the transport, the client, initialize; the first attempt to answer becomes the link. */
  private async connect(): Promise<void> {
    let done = false;
    let transport: NodeTransport | undefined;
    const fail = (why: string) => {
      if (done) return;
      done = true;
      this.attempts.delete(attempt);
      if (transport) void endTransport(transport);
      this.attemptFailed(why);
    };
    const attempt: Attempt = { started: Date.now(), abandon: fail };
    this.attempts.add(attempt);
    if (this.status !== "reachable") this.setStatus("connecting");
    // The SDK's client and the transport's module are loaded with the first link, not at every server's start (a
    // server without nodes never needs them).
    let opened: [typeof import("@modelcontextprotocol/sdk/client/index.js"), NodeTransport];
    try {
      opened = await Promise.all([import("@modelcontextprotocol/sdk/client/index.js"), this.open(this.cfg)]);
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
    const [{ Client }, tr] = opened;
    if (done || this.closed) {
      this.attempts.delete(attempt);
      return;
    }
    transport = tr;
    let tail = "";
    tr.stderr?.on("data", (b: Buffer) => (tail = (tail + b.toString()).slice(-2000)));
    const said = () => {
      const line = tail.trim().split("\n").pop()?.trim();
      return line ? `; it said: ${line.slice(0, 300)}` : "";
    };
    const client = new Client(
      { name: COORDINATOR_CLIENT, version: this.clientVersion },
      { capabilities: { experimental: { [SESSIONS_CHANGED_CAP]: {} } } },
    );
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      if (this.client === client) this.events.notice?.(this.name, n.params.level, n.params.data);
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (this.client === client) this.events.resourceUpdated?.(this.name, n.params.uri);
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      if (this.client === client) this.events.listChanged?.(this.name);
    });
    client.setNotificationHandler(SessionsChangedSchema, () => {
      if (this.client === client) this.events.sessionsChanged?.(this.name);
    });
    tr.onclose = () =>
      this.client === client ? this.lost(this.generation, `its command exited${said()}`) : fail(`its command exited${said()}`);
    tr.onerror = (e) => this.log.debug(`node ${this.name}: ${String(e)}`);
    try {
      await client.connect(tr, { timeout: this.t.connectTimeoutMs });
    } catch (e) {
      fail(`it did not answer initialize (${e instanceof Error ? e.message : String(e)})${said()}`);
      return;
    }
    if (done) return;
    done = true;
    this.attempts.delete(attempt);
    if (this.closed || this.status === "reachable") return void endTransport(tr);
    this.adopt(client, tr, Date.now() - attempt.started);
  }

  /** The attempt that answered first becomes the link; the others are ended. */
  private adopt(client: Client, tr: NodeTransport, tookMs: number): void {
    const gen = ++this.generation;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    this.transport = tr;
    this.client = client;
    // Shown in nodes, logs and `claude-sessions nodes`: a version, or nothing.
    const v = client.getServerVersion()?.version;
    this.version = typeof v === "string" && /^[0-9A-Za-z.+_-]{1,64}$/.test(v) ? v : undefined;
    this.pushes = client.getServerCapabilities()?.experimental?.[SESSIONS_CHANGED_CAP] !== undefined;
    const down = this.downSince;
    this.attempt = 0;
    this.stuck = 0;
    this.error = undefined;
    this.downSince = undefined;
    this.everUp = true;
    this.setStatus("reachable");
    for (const other of [...this.attempts]) other.abandon("another attempt answered first");
    const after = down ? `, ${Date.now() - down} ms after the outage began` : "";
    this.log.info(`node ${this.name}: reachable (claude-sessions ${this.version ?? "?"}; connected in ${tookMs} ms${after})`);
    this.heartbeat = setInterval(() => void this.beat(gen), this.t.heartbeatMs);
    this.heartbeat.unref();
    for (const uri of this.subscriptions)
      void client
        .subscribeResource({ uri })
        .catch((e: unknown) => this.log.debug(`node ${this.name}: resubscribing ${uri}: ${String(e)}`));
    this.events.up?.(this.name);
  }

  /** An attempt failed (or was abandoned): while none is left in flight the node is unreachable, and the next is due. */
  private attemptFailed(why: string): void {
    if (this.closed || this.status === "reachable") return;
    this.error = why;
    this.downSince ??= Date.now();
    this.log.debug(`node ${this.name}: connection failed (${why})`);
    if (this.attempts.size) return;
    this.setStatus("unreachable");
    this.events.down?.(this.name, why);
    // Quick failures (no route, refused) retry after the back-off alone.
    this.schedule(0);
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
    if (gen !== this.generation || this.status !== "reachable") return;
    this.generation++;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.error = why;
    this.downSince ??= Date.now();
    const err = unreachable(this.name, why);
    for (const fail of [...this.inflight]) fail(err);
    this.inflight.clear();
    const tr = this.transport;
    this.transport = undefined;
    this.client = undefined;
    if (tr) void endTransport(tr);
    this.setStatus("unreachable");
    this.log.warn(`node ${this.name}: unreachable (${why})`);
    this.events.down?.(this.name, why);
    this.schedule(0);
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
  async call(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext = {},
    limitMs = callLimit(args),
  ): Promise<Record<string, unknown>> {
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
    const ended = new Promise<never>((_, reject) =>
      ctl.signal.addEventListener("abort", () => reject(timedOut ? silent(this.name, name, limitMs) : cancelled(this.name)), {
        once: true,
      }),
    );
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

  private async forward(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext,
    signal: AbortSignal,
    alive: () => void,
    limitMs: number,
  ): Promise<CallToolResult> {
    const client = await this.ready();
    const gen = this.generation;
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
            progress?.({
              progress: p.progress,
              ...(p.total !== undefined ? { total: p.total } : {}),
              ...(p.message ? { message: p.message } : {}),
            });
          },
        })
        .then(
          (r) => resolve(r as CallToolResult),
          (e: unknown) => {
            if (signal.aborted) reject(cancelled(this.name));
            else if (this.status !== "reachable") reject(unreachable(this.name, this.error ?? String(e)));
            else if (!(e instanceof McpError)) {
              // Not the node's answer but the transport failing (an HTTP request refused, a pipe closed): the link
              // is lost now, not at the next heartbeat.
              const why = `the request could not be sent (${e instanceof Error ? e.message : String(e)})`;
              this.lost(gen, why);
              reject(unreachable(this.name, why));
            } else
              reject(
                new SessionError("INTERNAL", `node ${this.name}: ${e instanceof Error ? e.message : String(e)}`, {
                  details: { node: this.name },
                }),
              );
          },
        )
        .finally(() => this.inflight.delete(fail));
    });
  }

  /** Resource reads (session://…) on the node. */
  async readResource(uri: string): Promise<{ uri: string; mimeType?: string; text?: string }[]> {
    const client = await this.ready();
    const res = await client.readResource({ uri }, { timeout: 30_000 }).catch((e: unknown) => {
      throw this.status !== "reachable"
        ? unreachable(this.name, this.error ?? String(e))
        : new SessionError("SESSION_NOT_FOUND", `node ${this.name}: ${e instanceof Error ? e.message : String(e)}`);
    });
    // Only the resource asked for, as text: anything else the node sends is left out.
    return (res.contents as Array<{ uri?: unknown; mimeType?: unknown; text?: unknown }>)
      .filter((c) => c.uri === uri && typeof c.text === "string")
      .map((c) => ({
        uri,
        text: c.text as string,
        ...(typeof c.mimeType === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(c.mimeType) ? { mimeType: c.mimeType } : {}),
      }));
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
    for (const a of [...this.attempts]) a.abandon("the coordinator is closing");
    const tr = this.transport;
    this.transport = undefined;
    this.client = undefined;
    if (tr) await endTransport(tr);
    for (const fail of [...this.inflight]) fail(unreachable(this.name, "the coordinator is closing"));
    this.setStatus("unreachable");
  }
}

/**
 * Ends a transport: a hung ssh on a cut link does not end on stdin's close, so it is signalled at once, then reaped;
 * an HTTP session is ended on the node first (its server holds a bounded number), within 2 s.
 */
async function endTransport(tr: NodeTransport): Promise<void> {
  tr.onclose = undefined;
  const pid = tr.pid;
  if (pid) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
  if (tr.terminateSession) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([tr.terminateSession().catch(() => {}), new Promise<void>((ok) => (timer = setTimeout(ok, 2000)))]);
    clearTimeout(timer);
  }
  await tr.close().catch(() => {});
}

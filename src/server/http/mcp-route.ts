/**
 * MCP over Streamable HTTP at /mcp: one SDK transport and one `Server` per MCP session (per client), all over
 * the same SessionService. Progress, cancellation and notifications travel on each client's own transport.
 *
 * An SDK client's close() sends no DELETE, so sessions are also ended by the server: one with no request and no
 * open stream for `idleMs` ends, and at `maxClients` a new client takes the place of the least recently used idle
 * one. A session with an open stream or a request in flight is never ended. Ending one closes its `Server`, which
 * removes its listeners from the SessionService.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { HealthCheck } from "../../api/index.js";
import type { SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";
import { createServer, type ServerOptions } from "../server.js";

export const DEFAULT_MAX_CLIENTS = 256;
export const DEFAULT_IDLE_MS = 30 * 60_000;

export interface McpLimits {
  /** MCP sessions held at once. */
  maxClients: number;
  /** An MCP session with no request and no open stream this long ends; 0: never (only evicted at the cap). */
  idleMs: number;
}

interface Client {
  id?: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Requests in flight and open streams (responses not closed yet). */
  open: number;
  lastSeen: number;
  timer?: NodeJS.Timeout;
}

export class McpRoute {
  private readonly clients = new Map<string, Client>();
  private starting = 0;
  private readonly limits: McpLimits;

  constructor(
    private readonly svc: SessionService,
    private readonly log: Logger,
    private readonly version: string,
    private readonly opts: ServerOptions,
    limits: Partial<McpLimits> = {},
  ) {
    this.limits = { maxClients: limits.maxClients ?? DEFAULT_MAX_CLIENTS, idleMs: limits.idleMs ?? DEFAULT_IDLE_MS };
  }

  get size(): number {
    return this.clients.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sid = req.headers["mcp-session-id"];
    if (typeof sid === "string") {
      const c = this.clients.get(sid);
      if (!c)
        return jsonError(
          res,
          404,
          "unknown MCP session (it ended, was idle too long, or the server restarted): initialize again",
        );
      this.track(c, res);
      return c.transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return jsonError(res, 400, "an MCP session starts with a POST of initialize");
    if (this.clients.size + this.starting >= this.limits.maxClients && !this.evictOne()) {
      return jsonError(
        res,
        503,
        `too many MCP sessions (${this.limits.maxClients}), each with an open stream or a request in flight; close some first`,
        { "retry-after": "5" },
      );
    }
    const server = createServer(this.svc, this.log, this.version, this.opts);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        c.id = id;
        this.clients.set(id, c);
        this.log.info(`MCP client connected over HTTP (${this.clients.size} now)`);
      },
    });
    const c: Client = { transport, server, open: 0, lastSeen: Date.now() };
    transport.onclose = () => {
      clearTimeout(c.timer);
      if (c.id && this.clients.get(c.id) === c) {
        this.clients.delete(c.id);
        this.log.info(`MCP client left (${this.clients.size} now)`);
      }
    };
    this.starting++;
    try {
      await server.connect(transport);
      this.track(c, res);
      await transport.handleRequest(req, res);
    } finally {
      this.starting--;
    }
    // Not an initialize request: the transport answered with an error and holds nothing worth keeping.
    if (!transport.sessionId) await server.close().catch(() => {});
  }

  /** One more request or stream of `c` until `res` closes; the idle clock starts when the last one closes. */
  private track(c: Client, res: ServerResponse): void {
    c.open++;
    c.lastSeen = Date.now();
    clearTimeout(c.timer);
    c.timer = undefined;
    res.once("close", () => {
      c.open--;
      c.lastSeen = Date.now();
      if (c.open === 0 && this.limits.idleMs > 0 && c.id && this.clients.get(c.id) === c) {
        c.timer = setTimeout(() => this.end(c, `idle for ${this.limits.idleMs} ms`), this.limits.idleMs);
        c.timer.unref();
      }
    });
  }

  /** Ends an idle session: closing its Server closes the transport and removes its SessionService listeners. */
  private end(c: Client, why: string): void {
    if (c.open > 0 || !c.id || this.clients.get(c.id) !== c) return;
    clearTimeout(c.timer);
    this.clients.delete(c.id);
    this.log.info(`MCP client ${c.id} ended: ${why} (${this.clients.size} now)`);
    void c.server.close().catch((e: unknown) => this.log.debug(`closing an MCP session: ${String(e)}`));
  }

  /** Ends the least recently used idle session; false when every session has a stream or a request open. */
  private evictOne(): boolean {
    let lru: Client | undefined;
    for (const c of this.clients.values()) if (c.open === 0 && (!lru || c.lastSeen < lru.lastSeen)) lru = c;
    if (!lru) return false;
    this.end(lru, `the least recently used idle session, making room (at most ${this.limits.maxClients})`);
    return true;
  }

  /** health_check's line: the MCP sessions held and the SessionService listeners (a leak shows here). */
  health(): HealthCheck {
    const active = [...this.clients.values()].filter((c) => c.open > 0).length;
    const l = this.svc.listenerCounts;
    const full = this.clients.size >= this.limits.maxClients && active === this.clients.size;
    return {
      name: "http_clients",
      status: full ? "degraded" : "ok",
      detail:
        `${this.clients.size} MCP sessions over HTTP (${active} with an open stream or a request in flight; at most ${this.limits.maxClients}; ` +
        `idle ones end after ${this.limits.idleMs ? `${this.limits.idleMs} ms` : "never"}); ${l.changes} session-change and ${l.limits} time-limit listeners`,
    };
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    for (const c of all) clearTimeout(c.timer);
    await Promise.all(all.map((c) => c.server.close().catch(() => {})));
  }
}

export function jsonError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

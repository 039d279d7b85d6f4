/**
 * MCP over Streamable HTTP at /mcp: one SDK transport and one `Server` per MCP session (per client), all over
 * the same SessionService. Progress, cancellation and notifications travel on each client's own transport.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";
import { createServer, type ServerOptions } from "../server.js";

const MAX_CLIENTS = 256;

export class McpRoute {
  private readonly clients = new Map<string, { transport: StreamableHTTPServerTransport; close: () => Promise<void> }>();

  constructor(
    private readonly svc: SessionService,
    private readonly log: Logger,
    private readonly version: string,
    private readonly opts: ServerOptions,
  ) {}

  get size(): number {
    return this.clients.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sid = req.headers["mcp-session-id"];
    if (typeof sid === "string") {
      const c = this.clients.get(sid);
      if (!c) return jsonError(res, 404, "unknown MCP session (it ended or the server restarted): initialize again");
      return c.transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return jsonError(res, 400, "an MCP session starts with a POST of initialize");
    if (this.clients.size >= MAX_CLIENTS) return jsonError(res, 503, `too many MCP sessions (${MAX_CLIENTS}); close some first`);
    const server = createServer(this.svc, this.log, this.version, this.opts);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.clients.set(id, { transport, close: () => server.close() });
        this.log.info(`MCP client connected over HTTP (${this.clients.size} now)`);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId && this.clients.delete(transport.sessionId)) this.log.info(`MCP client left (${this.clients.size} now)`);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialize request: the transport answered with an error and holds nothing worth keeping.
    if (!transport.sessionId) await server.close().catch(() => {});
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((c) => c.close().catch(() => {})));
  }
}

export function jsonError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/**
 * `serve --http [HOST:]PORT`: MCP over Streamable HTTP at /mcp and the web view at /, in one node:http server
 * over one SessionService. Every request passes the Host/Origin check; /mcp needs the bearer token, the page
 * the sign-in cookie (or the token).
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { z } from "zod";
import { SessionError, toSessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";
import { serverInfo } from "../info.js";
import type { CallRouter } from "../tool.js";
import { Guard, isLoopback, RETRY_AFTER_S } from "./guard.js";
import { jsonError, McpRoute, type McpLimits } from "./mcp-route.js";
import { handleWeb } from "./web.js";

export const DEFAULT_PORT = 8914;

export interface HttpOptions {
  host: string;
  port: number;
  token: string;
  allowRemote?: boolean;
  /** MCP sessions held at once, and how long an idle one lives (see httpLimits). */
  limits?: Partial<McpLimits>;
  /** With nodes configured (src/nodes): every call, the list and the page's controls reach every machine. */
  router?: CallRouter;
  /** The directories the page may start sessions in (CLAUDE_SESSIONS_WEB_ROOTS; none: the page starts nothing). */
  webRoots?: readonly string[];
}

export interface HttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `[HOST:]PORT` (IPv6 in brackets) → host and port; bad input → INVALID_ARGUMENT. */
export function parseListen(spec: string | undefined): { host: string; port: number } {
  if (spec === undefined || spec === "") return { host: "127.0.0.1", port: DEFAULT_PORT };
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(spec);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535)
    throw new SessionError("INVALID_ARGUMENT", `--http takes [HOST:]PORT (got ${JSON.stringify(spec)}).`, {
      suggestion: "For example --http 8914 or --http 127.0.0.1:8914.",
    });
  return { host: (m[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
}

export async function startHttp(svc: SessionService, log: Logger, version: string, o: HttpOptions): Promise<HttpServer> {
  if (!isLoopback(o.host) && !o.allowRemote) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${o.host} is not a loopback address; serving beyond this machine needs --allow-remote.`,
      {
        suggestion:
          "Add --allow-remote, and put TLS in front (a reverse proxy): the token and the page travel in clear otherwise.",
      },
    );
  }
  const mcp = new McpRoute(svc, log, version, { transport: "http", ...(o.router ? { router: o.router } : {}) }, o.limits);
  const health = () => mcp.health();
  let guard: Guard | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!guard) return jsonError(res, 503, "starting");
    const bad = guard.checkOrigin(req);
    if (bad) return jsonError(res, 403, bad);
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/mcp") {
      const v = await guard.authenticate(req);
      if (!v.ok && v.status === 429) return jsonError(res, 429, v.why, { "retry-after": String(RETRY_AFTER_S) });
      if (!v.ok || v.via !== "bearer")
        return jsonError(res, 401, v.ok ? "MCP needs the bearer token" : v.why, {
          "www-authenticate": 'Bearer realm="claude-sessions"',
        });
      return mcp.handle(req, res);
    }
    return handleWeb(svc, guard, req, res, url, o.router, o.webRoots);
  };

  const server = createHttpServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const err =
        e instanceof z.ZodError
          ? new SessionError("INVALID_ARGUMENT", e.issues.map((i) => i.message).join("; "))
          : toSessionError(e);
      if (err.code === "INTERNAL")
        log.error(`HTTP ${req.method} ${req.url}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (!res.headersSent) jsonError(res, err.code === "INVALID_ARGUMENT" ? 400 : 500, err.message);
      else res.end();
    });
  });
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : o.port;
  guard = new Guard(o.token, o.host, port);
  serverInfo.checks.add(health);
  const shown = o.host.includes(":") ? `[${o.host}]` : o.host;
  if (!isLoopback(o.host))
    log.warn(
      `serving on ${shown}:${port}, beyond this machine: put TLS in front (the token and the page travel in clear otherwise)`,
    );
  return {
    url: `http://${shown}:${port}`,
    port,
    async close() {
      serverInfo.checks.delete(health);
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

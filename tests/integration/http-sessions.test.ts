/**
 * MCP-over-HTTP sessions end without a DELETE, and the back-off delays only failing requests (issue #19, items 11
 * and 12): the built server as `serve --http`, real SDK clients (StreamableHTTPClientTransport) that close the way
 * the SDK does (no DELETE), raw requests where a test must forge headers or pick its source address.
 */
import { spawnSync } from "node:child_process";
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, makeWorld, until, type World } from "../helpers/harness.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: string; ms: number };

/** A raw request (headers fetch will not send, a chosen loopback source address); `ms` is until the answer's end. */
function raw(url: string, method: string, headers: Record<string, string>, body = "", localAddress?: string): Promise<Raw> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ...(localAddress ? { localAddress } : {}) }, (res) => {
      let text = "";
      res.on("data", (b: Buffer) => (text += b.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, ms: performance.now() - t0 }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const PING = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });

/** An SDK client that connects and closes the way `client.close()` does: the connection ends, no DELETE is sent. */
async function connectAndClose(srv: HttpServerProc, name: string): Promise<string> {
  const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${srv.token}` } },
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  const id = transport.sessionId!;
  await client.close();
  return id;
}

/** The server's own count of its MCP sessions and of the SessionService's listeners (health_check's http_clients). */
async function held(c: HttpMcp): Promise<{ sessions: number; active: number; changes: number; limits: number }> {
  const h = await c.callOk("health_check", {});
  const d = h.checks.find((x) => x.name === "http_clients")?.detail ?? "";
  const m =
    /^(\d+) MCP sessions over HTTP \((\d+) with an open stream.*; (\d+) session-change and (\d+) time-limit listeners$/.exec(d);
  if (!m) throw new Error(`no http_clients line in health_check: ${JSON.stringify(h.checks)}`);
  return { sessions: Number(m[1]), active: Number(m[2]), changes: Number(m[3]), limits: Number(m[4]) };
}

/** A request on an existing MCP session (a ping): 200 while the server holds it, 404 once it ended. */
async function pingStatus(srv: HttpServerProc, sessionId: string): Promise<number> {
  return (
    await raw(
      `${srv.url}/mcp`,
      "POST",
      { ...MCP_HEADERS, authorization: `Bearer ${srv.token}`, "mcp-session-id": sessionId },
      PING,
    )
  ).status;
}

describe("MCP sessions over HTTP end without a DELETE", () => {
  const worlds: World[] = [];
  const servers: HttpServerProc[] = [];
  const clients: HttpMcp[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const w = makeWorld();
    worlds.push(w);
    const srv = await startHttpServer(w, env);
    servers.push(srv);
    const observer = await connectHttp(srv.url, srv.token, "observer");
    clients.push(observer);
    return { srv, observer };
  };
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    for (const s of servers) await s.stop();
    for (const w of worlds) w.cleanup();
  });

  it("300 SDK clients (more than the 256 cap) connect and close without DELETE: every one gets in, and the held ones' listeners stay at 2 each", async () => {
    const { srv, observer } = await start();
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push(await connectAndClose(srv, `churn-${i}`));
    // A new client still gets in, and works.
    const late = await connectHttp(srv.url, srv.token, "late");
    clients.push(late);
    expect((await late.callOk("list_sessions", {})).sessions).toEqual([]);
    // The least recently used went first: the oldest closed ones ended, the newest are still held.
    expect(await pingStatus(srv, ids[0]!)).toBe(404);
    expect(await pingStatus(srv, ids.at(-1)!)).toBe(200);
    const h = await held(observer);
    expect(h.sessions).toBe(256);
    // Evicted sessions left nothing behind: one change and one limit listener per held MCP session, each closed Server's removed.
    expect(h.changes).toBe(2 * h.sessions);
    expect(h.limits).toBe(2 * h.sessions);
    expect(srv.stderr()).not.toContain("too many MCP sessions");
  }, 180_000);

  it("an idle session ends after CLAUDE_SESSIONS_HTTP_IDLE_MS, with its listeners; a client holding its stream open stays", async () => {
    const { srv, observer } = await start({ CLAUDE_SESSIONS_HTTP_IDLE_MS: "1000" });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await connectAndClose(srv, `idle-${i}`));
    // Back to the observer alone (its stream open), with its own two listeners of each kind only. The wait is for
    // the server's idle time (1 s), not an assertion on it.
    expect(await until(async () => ((await held(observer)).sessions === 1 ? held(observer) : undefined), 30_000)).toEqual({
      sessions: 1,
      active: 1,
      changes: 2,
      limits: 2,
    });
    for (const id of ids) expect(await pingStatus(srv, id)).toBe(404);
    // The observer, whose stream stayed open far longer than the idle time, still works.
    expect((await observer.callOk("list_sessions", {})).sessions).toEqual([]);
    expect(srv.stderr()).toMatch(/ended: idle for 1000 ms/);
  }, 60_000);

  it("at the cap, the least recently used idle session makes room; a session with an open stream is never evicted (503 when all have one)", async () => {
    const { srv, observer } = await start({ CLAUDE_SESSIONS_HTTP_MAX_CLIENTS: "3" });
    const x = await connectAndClose(srv, "x");
    const y = await connectAndClose(srv, "y");
    expect(await pingStatus(srv, x)).toBe(200);
    expect(await pingStatus(srv, y)).toBe(200); // y is now the more recently used
    const z = await connectHttp(srv.url, srv.token, "z"); // takes x's place
    clients.push(z);
    expect(await pingStatus(srv, x)).toBe(404);
    expect(await pingStatus(srv, y)).toBe(200);
    const w = await connectHttp(srv.url, srv.token, "w"); // takes y's place
    clients.push(w);
    expect(await pingStatus(srv, y)).toBe(404);
    // Now all three hold an open stream (an SDK client opens it just after connect() returns): nobody is evicted, a
    // fourth client is refused.
    expect(await until(async () => ((await held(observer)).active === 3 ? held(observer) : undefined))).toMatchObject({
      sessions: 3,
      active: 3,
      changes: 6,
      limits: 6,
    });
    await expect(connectAndClose(srv, "fourth")).rejects.toThrow(/503|too many MCP sessions/);
    for (const c of [observer, z, w]) expect((await c.callOk("list_sessions", {})).sessions).toEqual([]);
    expect((await held(observer)).sessions).toBe(3);
  }, 60_000);

  it("refuses bad CLAUDE_SESSIONS_HTTP_MAX_CLIENTS / _IDLE_MS with a typed error", () => {
    const w = makeWorld();
    worlds.push(w);
    for (const [key, value] of [
      ["CLAUDE_SESSIONS_HTTP_MAX_CLIENTS", "0"],
      ["CLAUDE_SESSIONS_HTTP_IDLE_MS", "soon"],
    ] as const) {
      const r = spawnSync(process.execPath, [CLI, "serve", "--http", "127.0.0.1:0"], {
        env: { ...w.env, [key]: value },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("INVALID_ARGUMENT");
      expect(r.stderr).toContain(key);
    }
  });
});

describe("the back-off delays only failing requests", () => {
  let w: World;
  let srv: HttpServerProc;
  beforeAll(async () => {
    w = makeWorld();
    srv = await startHttpServer(w);
  });
  afterAll(async () => {
    await srv?.stop();
    w?.cleanup();
  });

  it("wrong tokens on /mcp, the web routes and the sign-in are answered later and later; the right credential from the same address is answered at once", async () => {
    const wrong = { authorization: "Bearer not-the-token-at-all" };
    const form = { "content-type": "application/x-www-form-urlencoded" };
    // Five free failures, one on each kind of route.
    for (const r of [
      await raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, ...wrong }, INIT),
      await raw(`${srv.url}/api/me`, "GET", wrong),
      await raw(`${srv.url}/api/events`, "GET", wrong),
      await raw(`${srv.url}/api/sessions/abc/kill`, "POST", { ...wrong, "content-type": "application/json" }, "{}"),
    ])
      expect(r.status).toBe(401);
    expect((await raw(`${srv.url}/login`, "POST", form, "token=wrong")).headers.location).toBe("/login?failed=1");
    // From the sixth on, each is delayed: 100, 200, 400, 800, 1600, 2000 ms (lower bounds only).
    const delayed: Array<[string, () => Promise<Raw>, number]> = [
      ["/mcp", () => raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, ...wrong }, INIT), 100],
      ["/api/me", () => raw(`${srv.url}/api/me`, "GET", wrong), 200],
      ["/login", () => raw(`${srv.url}/login`, "POST", form, "token=wrong"), 400],
      [
        "/api/sessions/abc/kill",
        () => raw(`${srv.url}/api/sessions/abc/kill`, "POST", { ...wrong, "content-type": "application/json" }, "{}"),
        800,
      ],
      ["/api/events", () => raw(`${srv.url}/api/events`, "GET", wrong), 1600],
      ["/mcp", () => raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, ...wrong }, INIT), 2000],
    ];
    for (const [route, go, ms] of delayed) {
      const r = await go();
      expect([401, 303], route).toContain(r.status);
      expect(r.ms, `${route} answered before its back-off`).toBeGreaterThanOrEqual(ms - 5);
    }
    // The back-off now stands at 2 s for this address; the right credential is not held back by it (a bound far below 2 s).
    const mcp = await raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, authorization: `Bearer ${srv.token}` }, INIT);
    expect(mcp.status).toBe(200);
    expect(mcp.ms).toBeLessThan(1000);
    const me = await raw(`${srv.url}/api/me`, "GET", { authorization: `Bearer ${srv.token}` });
    expect(me.status).toBe(200);
    expect(me.ms).toBeLessThan(1000);
    const login = await raw(`${srv.url}/login`, "POST", form, `token=${encodeURIComponent(srv.token)}`);
    expect(login.headers.location).toBe("/");
    expect(login.ms).toBeLessThan(1000);
    const jar = String(login.headers["set-cookie"]).split(";")[0]!;
    const page = await raw(`${srv.url}/api/me`, "GET", { cookie: jar });
    expect(page.status).toBe(200);
    expect(page.ms).toBeLessThan(1000);
    // A right request does not wipe the count: the next wrong one is still delayed.
    const again = await raw(`${srv.url}/api/me`, "GET", wrong);
    expect(again.status).toBe(401);
    expect(again.ms).toBeGreaterThanOrEqual(2000 - 5);
    // Another address has its own count: its first wrong token is answered at once.
    const other = await raw(`${srv.url}/api/me`, "GET", wrong, "", "127.0.0.2");
    expect(other.status).toBe(401);
    expect(other.ms).toBeLessThan(1000);
  }, 60_000);
});

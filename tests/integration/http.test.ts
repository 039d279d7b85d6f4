/**
 * MCP over Streamable HTTP (issue #15): the built server as `serve --http`, real MCP clients over the SDK's
 * StreamableHTTPClientTransport, real tmux on a private socket and the fake claude.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { CLI, makeWorld, processesIn, tmuxOrSkip, until, type World } from "../helpers/harness.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";

const HAS_TMUX = tmuxOrSkip();

/** A raw request with headers fetch will not let a test forge (Host). */
function raw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = "",
  localAddress?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ...(localAddress ? { localAddress } : {}) }, (res) => {
      let text = "";
      res.on("data", (b: Buffer) => (text += b.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A server-sent events feed, read as it comes: the events so far, and a way to close it. */
function sse(url: string, headers: Record<string, string>): { events: Array<{ event: string; data: unknown }>; close(): void } {
  const events: Array<{ event: string; data: unknown }> = [];
  let buf = "";
  const req = request(url, { headers }, (res) => {
    res.on("data", (b: Buffer) => {
      buf += b.toString();
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) events.push({ event, data: JSON.parse(data) });
      }
    });
  });
  req.on("error", () => {});
  req.end();
  return { events, close: () => req.destroy() };
}

/** Signs the page in: its cookie and CSRF token. */
async function signIn(url: string, token: string): Promise<{ jar: string; csrf: string }> {
  const ok = await raw(
    `${url}/login`,
    "POST",
    { "content-type": "application/x-www-form-urlencoded" },
    `token=${encodeURIComponent(token)}`,
  );
  const jar = String(ok.headers["set-cookie"]).split(";")[0]!;
  const me = JSON.parse((await raw(`${url}/api/me`, "GET", { cookie: jar })).body) as { csrf: string };
  return { jar, csrf: me.csrf };
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe.runIf(HAS_TMUX)("MCP over Streamable HTTP", () => {
  let w: World;
  let srv: HttpServerProc;
  let a: HttpMcp;
  let b: HttpMcp;

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    srv = await startHttpServer(w);
    [a, b] = await Promise.all([connectHttp(srv.url, srv.token, "client-a"), connectHttp(srv.url, srv.token, "client-b")]);
  });
  afterAll(async () => {
    await a?.close().catch(() => {});
    await b?.close().catch(() => {});
    await srv?.stop();
    w?.cleanup();
  });

  it("two clients at once share the sessions: A starts one, B lists it, drives it and gets its own progress", async () => {
    const started = await a.callOk("start_session", { cwd: w.dir("shared") });
    const id = started.session_id;
    const listed = await b.callOk("list_sessions", {});
    expect(listed.sessions.map((s) => s.session_id)).toContain(id);

    const progressA: unknown[] = [];
    const progressB: unknown[] = [];
    // A waits on the session while B drives it; each gets the progress of its own call only.
    const waitA = a.callOk(
      "wait_for_completion",
      { session_id: id, timeout_ms: 20_000 },
      { onprogress: (p) => progressA.push(p) },
    );
    await b.callOk("send_message", { session_id: id, message: "FAKE_SLOW:2500 from b", wait_for_response: false });
    const doneB = await b.callOk(
      "wait_for_completion",
      { session_id: id, timeout_ms: 20_000 },
      { onprogress: (p) => progressB.push(p) },
    );
    expect(doneB).toMatchObject({ completed: true, last_response: "FAKE REPLY: FAKE_SLOW:2500 from b" });
    expect(progressB.length).toBeGreaterThanOrEqual(1);
    expect((progressB[0] as { message?: string }).message).toContain(id);
    await waitA;

    // Cancellation is per client: B's cancelled call ends at once, A's call on the same session goes on.
    await a.callOk("send_message", { session_id: id, message: "FAKE_SLOW:1500 from a", wait_for_response: false });
    const ac = new AbortController();
    const cancelled = b.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 }, { signal: ac.signal });
    const stillA = a.callOk("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    setTimeout(() => ac.abort(), 200);
    await expect(cancelled).rejects.toThrow();
    expect(await stillA).toMatchObject({ completed: true });
    expect((await b.callOk("list_sessions", {})).sessions.length).toBe(1);
    await b.callOk("kill_session", { session_id: id });
  }, 60_000);

  it("refuses requests without the token or with a wrong one (401), and after repeated failures backs off", async () => {
    const none = await raw(`${srv.url}/mcp`, "POST", MCP_HEADERS, INIT);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
    const wrong = await raw(
      `${srv.url}/mcp`,
      "POST",
      { ...MCP_HEADERS, authorization: `Bearer ${srv.token.slice(0, -2)}xx` },
      INIT,
    );
    expect(wrong.status).toBe(401);
    // From an address of its own (127.0.0.3), so the back-off does not reach the other tests' failures.
    const t0 = Date.now();
    for (let i = 0; i < 8; i++)
      expect(
        (await raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, authorization: "Bearer nope" }, INIT, "127.0.0.3")).status,
      ).toBe(401);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100 + 200 + 400);
    const right = await raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, authorization: `Bearer ${srv.token}` }, INIT);
    expect(right.status).toBe(200);
    expect(right.headers["mcp-session-id"]).toBeTruthy();
    // The page's API needs the sign-in as well.
    expect((await raw(`${srv.url}/api/events`, "GET", {})).status).toBe(401);
  });

  it("guesses sent in parallel are not all checked: past the back-off, 4 wait and the rest get 429 unchecked, even the right token", async () => {
    // An address of its own (127.0.0.4): 6 wrong tokens one after another put it past the free failures.
    const from = "127.0.0.4";
    const guess = (token: string) =>
      raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, authorization: `Bearer ${token}` }, INIT, from);
    for (let i = 0; i < 6; i++) expect((await guess("nope")).status).toBe(401);
    // 24 guesses at once, the right token among the last: before, all were compared (each answered late, the right one at once).
    const t0 = Date.now();
    const answers = await Promise.all([...Array.from({ length: 23 }, (_, i) => guess(`guess-${i}`)), guess(srv.token)]);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(4);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20);
    expect(statuses.at(-1)).toBe(429);
    expect(answers.find((a) => a.status === 429)!.headers["retry-after"]).toBe("2");
    // The sign-in page is the same door.
    const logins = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        raw(`${srv.url}/login`, "POST", { "content-type": "application/x-www-form-urlencoded" }, `token=guess-${i}`, from),
      ),
    );
    expect(logins.filter((l) => l.status === 303).length).toBeLessThanOrEqual(4);
    expect(logins.filter((l) => l.status === 429).length).toBeGreaterThanOrEqual(8);
    // Once the waiting ones are answered, the right token is let in again.
    await until(async () => (await guess(srv.token)).status === 200, 15_000);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it("refuses a forged Host or Origin (DNS rebinding), with or without the token", async () => {
    const auth = { ...MCP_HEADERS, authorization: `Bearer ${srv.token}` };
    const port = new URL(srv.url).port;
    expect((await raw(`${srv.url}/mcp`, "POST", { ...auth, host: `evil.example:${port}` }, INIT)).status).toBe(403);
    expect((await raw(`${srv.url}/mcp`, "POST", { ...auth, origin: "http://evil.example" }, INIT)).status).toBe(403);
    expect((await raw(`${srv.url}/mcp`, "POST", { ...auth, origin: `http://127.0.0.1:${Number(port) + 1}` }, INIT)).status).toBe(
      403,
    );
    expect(
      (
        await raw(
          `${srv.url}/login`,
          "POST",
          { host: "attacker.example", "content-type": "application/x-www-form-urlencoded" },
          `token=${srv.token}`,
        )
      ).status,
    ).toBe(403);
    expect((await raw(`${srv.url}/mcp`, "POST", { ...auth, origin: srv.url }, INIT)).status).toBe(200);
    expect((await raw(`${srv.url}/mcp`, "POST", { ...auth, host: `localhost:${port}` }, INIT)).status).toBe(200);
  });

  it("the page signs in once for an HttpOnly SameSite=Strict cookie; its state-changing requests need the CSRF token", async () => {
    const bad = await raw(`${srv.url}/login`, "POST", { "content-type": "application/x-www-form-urlencoded" }, "token=wrong");
    expect(bad.status).toBe(303);
    expect(bad.headers.location).toBe("/login?failed=1");
    expect(bad.headers["set-cookie"]).toBeUndefined();
    const ok = await raw(
      `${srv.url}/login`,
      "POST",
      { "content-type": "application/x-www-form-urlencoded" },
      `token=${encodeURIComponent(srv.token)}`,
    );
    const cookie = String(ok.headers["set-cookie"]);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(srv.token);
    const jar = cookie.split(";")[0]!;
    const me = JSON.parse((await raw(`${srv.url}/api/me`, "GET", { cookie: jar })).body) as { csrf: string };
    expect(me.csrf).toBeTruthy();
    const noCsrf = await raw(
      `${srv.url}/api/sessions/abc/kill`,
      "POST",
      { cookie: jar, "content-type": "application/json" },
      "{}",
    );
    expect(noCsrf.status).toBe(403);
    const typed = await raw(
      `${srv.url}/api/sessions/nosuchsession/send`,
      "POST",
      { cookie: jar, "x-csrf-token": me.csrf, "content-type": "application/json" },
      JSON.stringify({ message: "hi" }),
    );
    expect(typed.status).toBe(404);
    expect(JSON.parse(typed.body).error.code).toBe("SESSION_NOT_FOUND");
    const badId = await raw(`${srv.url}/api/sessions/${encodeURIComponent("../x;$(id)")}/events`, "GET", { cookie: jar });
    expect(badId.status).toBe(400);
    const junk = await raw(
      `${srv.url}/api/sessions/nosuchsession/send`,
      "POST",
      { cookie: jar, "x-csrf-token": me.csrf },
      "{not json",
    );
    expect(junk.status).toBe(400);
    // MCP takes the bearer token only, never the page's cookie.
    expect((await raw(`${srv.url}/mcp`, "POST", { ...MCP_HEADERS, cookie: jar }, INIT)).status).toBe(401);
  });

  it("the web view's controls leave audit lines with the sign-in as actor (never the cookie or token); MCP calls name their client and transport", async () => {
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("audited") });
    const { jar, csrf } = await signIn(srv.url, srv.token);
    const headers = { cookie: jar, "x-csrf-token": csrf, "content-type": "application/json" };
    const sent = await raw(
      `${srv.url}/api/sessions/${id}/send`,
      "POST",
      headers,
      JSON.stringify({ message: "a secret-free hello from the page" }),
    );
    expect(sent.status).toBe(200);
    await a.callOk("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    const killed = await raw(`${srv.url}/api/sessions/${id}/kill`, "POST", headers, "{}");
    expect(killed.status, killed.body).toBe(200);
    const lines = await until(async () => {
      const all = (await readAudit(w.stateDir)).filter((l) => l.session_id === id);
      return all.some((l) => l.tool === "kill_session") ? all : undefined;
    }, 5000);
    const web = lines.filter((l) => l.actor.startsWith("web:"));
    expect(web.map((l) => [l.tool, l.outcome])).toEqual([
      ["send_message", "ok"],
      ["kill_session", "ok"],
    ]);
    expect(web[0]!.actor).toMatch(/^web:[0-9a-f]{8}$/);
    expect(web[1]!.actor).toBe(web[0]!.actor);
    expect(lines.find((l) => l.tool === "start_session")).toMatchObject({
      actor: expect.stringMatching(/^mcp:http:client-a\//),
      client: "client-a",
      outcome: "ok",
    });
    const text = readFileSync(join(w.stateDir, "audit.jsonl"), "utf8");
    expect(text).not.toContain(jar.split("=")[1]!);
    expect(text).not.toContain(csrf);
    expect(text).not.toContain(srv.token);
    expect(text).not.toContain("secret-free hello");
  }, 60_000);

  it("the web list's cost column: after a turn with usage, the list feed's row carries the session's total cost as list_sessions has it", async () => {
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("costly") });
    const feed = sse(`${srv.url}/api/events`, { authorization: `Bearer ${srv.token}` });
    try {
      await until(() => feed.events.some((e) => e.event === "snapshot"), 5000);
      await a.callOk("send_message", { session_id: id, message: "hello" });
      const row = await until(
        () =>
          feed.events.find(
            (e) =>
              e.event === "change" &&
              (e.data as { session_id?: string; total_cost_usd?: number }).session_id === id &&
              typeof (e.data as { total_cost_usd?: number }).total_cost_usd === "number",
          ),
        10_000,
      );
      const listed = await a.callOk("list_sessions", {});
      const mine = listed.sessions.find((x) => x.session_id === id)!;
      expect(mine.total_cost_usd).toBeGreaterThan(0);
      expect((row.data as { total_cost_usd: number }).total_cost_usd).toBe(mine.total_cost_usd);
      // The fake claude's reply "FAKE REPLY: hello": 12 input and 5 output tokens of claude-opus-4-8 ($5/$25 per M).
      expect(mine.total_cost_usd).toBeCloseTo((12 * 5 + 5 * 25) / 1e6, 9);
    } finally {
      feed.close();
      await a.callOk("kill_session", { session_id: id });
    }
  }, 60_000);

  it("keeps the generated token in <state>/token (0600), and never in argv, state.json, logs or stderr", () => {
    const st = statSync(join(w.stateDir, "token"));
    expect(st.mode & 0o777).toBe(0o600);
    expect(srv.stderr()).toContain(join(w.stateDir, "token"));
    expect(srv.stderr()).not.toContain(srv.token);
    expect(readFileSync(join(w.stateDir, "state.json"), "utf8")).not.toContain(srv.token);
    expect(readFileSync(`/proc/${srv.proc.pid}/cmdline`, "utf8")).not.toContain(srv.token);
  });
});

describe("serve --http arguments", () => {
  it("refuses a non-loopback address without --allow-remote, and bad [HOST:]PORT, with a typed error", () => {
    const w = makeWorld();
    try {
      const remote = spawnSync(process.execPath, [CLI, "serve", "--http", "0.0.0.0:0"], {
        env: w.env,
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(remote.status).toBe(1);
      expect(remote.stderr).toContain("--allow-remote");
      expect(remote.stderr).toContain("TLS");
      const bad = spawnSync(process.execPath, [CLI, "serve", "--http", "localhost:99999"], {
        env: w.env,
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain("INVALID_ARGUMENT");
      const short = spawnSync(process.execPath, [CLI, "serve", "--http", "127.0.0.1:0"], {
        env: { ...w.env, CLAUDE_SESSIONS_TOKEN: "short" },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(short.status).toBe(1);
      expect(short.stderr).toContain("CLAUDE_SESSIONS_TOKEN");
    } finally {
      w.cleanup();
    }
  });

  it("takes the token from CLAUDE_SESSIONS_TOKEN and writes no token file then", async () => {
    const w = makeWorld();
    const token = "a-test-token-of-enough-length-1234";
    const srv = await startHttpServer(w, { CLAUDE_SESSIONS_TOKEN: token });
    try {
      const c = await connectHttp(srv.url, token);
      expect((await c.callOk("list_sessions", {})).sessions).toEqual([]);
      // The sessions' processes do not inherit it.
      const cwd = w.dir("env");
      const id = (await c.callOk("start_session", { cwd, backend: "pty" })).session_id;
      const pids = processesIn(cwd);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) expect(readFileSync(`/proc/${pid}/environ`, "utf8")).not.toContain(token);
      await c.callOk("kill_session", { session_id: id });
      await c.close();
      expect(() => statSync(join(w.stateDir, "token"))).toThrow();
      expect(srv.stderr()).toContain("CLAUDE_SESSIONS_TOKEN");
      expect(srv.stderr()).not.toContain(token);
    } finally {
      await srv.stop();
      w.cleanup();
    }
  });
});

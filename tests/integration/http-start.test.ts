/**
 * Starting work from the page (issue #26): POST /api/start is start_session through callTool, with one rule of the
 * page's own — only inside the operator's CLAUDE_SESSIONS_WEB_ROOTS (real paths: no symbolic link or ".." out of
 * them) — and the page's CSRF header. The MCP tool is unaffected. Resume and answer go through their tools too.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { CLI, makeWorld, tmuxOrSkip, type World } from "../helpers/harness.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";

function raw(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = "";
      res.on("data", (b: Buffer) => (text += b.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function signIn(url: string, token: string): Promise<Record<string, string>> {
  const ok = await raw(
    `${url}/login`,
    "POST",
    { "content-type": "application/x-www-form-urlencoded" },
    `token=${encodeURIComponent(token)}`,
  );
  const jar = String(ok.headers["set-cookie"]).split(";")[0]!;
  const me = JSON.parse((await raw(`${url}/api/me`, "GET", { cookie: jar })).body) as { csrf: string };
  return { cookie: jar, "x-csrf-token": me.csrf, "content-type": "application/json" };
}

describe.runIf(tmuxOrSkip())("starting sessions from the page", () => {
  let w: World;
  let srv: HttpServerProc;
  let mcp: HttpMcp;
  let headers: Record<string, string>;
  let root: string;
  let outside: string;
  let accounts: string;
  const start = (body: unknown, h = headers) => raw(`${srv.url}/api/start`, "POST", h, JSON.stringify(body));
  const cwds = async () => (await mcp.callOk("list_sessions", { status_filter: "all" })).sessions.map((s) => s.cwd);

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    root = w.dir("allowed");
    outside = w.dir("outside");
    mkdirSync(join(root, "project"));
    symlinkSync(outside, join(root, "escape"));
    // The cost page's accounts (issue 33): one account whose windows the CLI's status line reported (the form below).
    accounts = join(w.root, "accounts.json");
    writeFileSync(accounts, JSON.stringify({ accounts: { W: { config_dir: join(w.root, "w") }, K: { api_key_env: "NOPE" } } }), {
      mode: 0o600,
    });
    mkdirSync(join(w.stateDir, "account-windows"), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(w.stateDir, "account-windows", "W.json"),
      JSON.stringify({
        cwd: "/x",
        rate_limits: {
          five_hour: { used_percentage: 42, resets_at: 1795824280 },
          seven_day: { used_percentage: 17, resets_at: 1796079880 },
        },
      }),
      { mode: 0o600 },
    );
    srv = await startHttpServer(w, { CLAUDE_SESSIONS_WEB_ROOTS: root, CLAUDE_SESSIONS_ACCOUNTS: accounts });
    mcp = await connectHttp(srv.url, srv.token);
    headers = await signIn(srv.url, srv.token);
  }, 60_000);
  afterAll(async () => {
    await mcp?.close().catch(() => {});
    await srv?.stop();
    w?.cleanup();
  });

  it("starts inside an allowed folder, with the page as the audit's actor, and offers the folder", async () => {
    const r = await start({ cwd: join(root, "project"), prompt: "hello", team_name: "web", worktree: false, model: "" });
    expect(r.status, r.body).toBe(200);
    const out = JSON.parse(r.body) as { session_id: string; cwd: string; team_name: string };
    expect(out).toMatchObject({ cwd: join(root, "project"), team_name: "web" });
    const audit = (await readAudit(w.stateDir)).find((l) => l.session_id === out.session_id && l.tool === "start_session");
    expect(audit?.actor).toMatch(/^web:/);
    const o = JSON.parse((await raw(`${srv.url}/api/start-options`, "GET", { cookie: headers.cookie! })).body) as {
      roots: string[];
      recent: string[];
      backends: string[];
    };
    expect(o.roots).toEqual([root]);
    expect(o.recent).toEqual([join(root, "project")]);
    expect(o.backends).toContain("tmux");
    await mcp.callOk("kill_session", { session_id: out.session_id });
  }, 30_000);

  it("the cost page's accounts: each account with its sessions, limit and usage windows; signed-in readers only", async () => {
    const r = await raw(`${srv.url}/api/accounts`, "GET", { cookie: headers.cookie! });
    expect(r.status, r.body).toBe(200);
    const out = JSON.parse(r.body) as { accounts: Array<{ name: string; kind: string; windows?: Record<string, unknown> }> };
    expect(out.accounts.map((a) => [a.name, a.kind])).toEqual([
      ["W", "config_dir"],
      ["K", "api_key_env"],
    ]);
    expect(out.accounts[0]!.windows).toMatchObject({
      five_hour: { used_percent: 42, resets_at: new Date(1795824280_000).toISOString() },
      seven_day: { used_percent: 17, resets_at: new Date(1796079880_000).toISOString() },
    });
    expect(out.accounts[1]!.windows).toBeUndefined();
    expect((await raw(`${srv.url}/api/accounts`, "GET", {})).status).toBe(401);
  }, 30_000);

  it("the form's sandbox: on starts a sandboxed session, off an unsandboxed one, anything else is refused", async () => {
    const on = await start({ cwd: join(root, "project"), sandbox: "on" });
    expect(on.status, on.body).toBe(200);
    const boxed = JSON.parse(on.body) as { session_id: string; sandboxed?: boolean };
    expect(boxed.sandboxed).toBe(true);
    const off = await start({ cwd: join(root, "project"), sandbox: "off" });
    expect(off.status, off.body).toBe(200);
    const plain = JSON.parse(off.body) as { session_id: string; sandboxed?: boolean };
    expect(plain.sandboxed).toBeUndefined();
    expect((await start({ cwd: join(root, "project"), sandbox: "yes" })).status).toBe(400);
    for (const id of [boxed.session_id, plain.session_id]) await mcp.callOk("kill_session", { session_id: id });
  }, 60_000);

  it("refuses folders outside the roots — directly, through a symbolic link or '..' — and starts nothing", async () => {
    for (const cwd of [outside, join(root, "escape"), `${root}/../outside`, "/"]) {
      const r = await start({ cwd });
      expect(r.status, cwd).toBe(403);
      expect(JSON.parse(r.body).error).toMatchObject({ code: "PERMISSION_DENIED" });
      expect(JSON.parse(r.body).error.suggestion).toContain("CLAUDE_SESSIONS_WEB_ROOTS");
    }
    const missing = await start({ cwd: join(root, "nope") });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body).error.code).toBe("INVALID_ARGUMENT");
    // Only the form's fields: start_session's others (a setup command, env) are not the page's to set.
    const extra = await start({ cwd: join(root, "project"), setup_command: ["touch", "x"] });
    expect(extra.status).toBe(400);
    // A bad value meets start_session's own schema.
    const mode = await start({ cwd: join(root, "project"), permission_mode: "yolo" });
    expect(mode.status).toBe(400);
    expect(JSON.parse(mode.body).error.message).toContain("permission_mode");
    // No CSRF header, no start.
    const { "x-csrf-token": _c, ...noCsrf } = headers;
    expect((await start({ cwd: join(root, "project") }, noCsrf)).status).toBe(403);
    expect((await cwds()).filter((c) => c !== join(root, "project"))).toEqual([]);
    // The MCP tool is not bound by the page's roots.
    const s = await mcp.callOk("start_session", { cwd: outside });
    expect(s.cwd).toBe(outside);
    await mcp.callOk("kill_session", { session_id: s.session_id });
  }, 30_000);

  it("resumes through resume_session", async () => {
    const r = JSON.parse((await start({ cwd: join(root, "project"), prompt: "before" })).body) as { session_id: string };
    await mcp.callOk("wait_for_completion", { session_id: r.session_id, timeout_ms: 10_000 });
    await mcp.callOk("kill_session", { session_id: r.session_id });
    const back = await raw(
      `${srv.url}/api/sessions/${r.session_id}/resume`,
      "POST",
      headers,
      JSON.stringify({ message: "after" }),
    );
    expect(back.status, back.body).toBe(200);
    expect(JSON.parse(back.body)).toMatchObject({ session_id: r.session_id, forked: false });
    const done = await mcp.callOk("wait_for_completion", { session_id: r.session_id, timeout_ms: 10_000 });
    expect(done.last_response).toBe("FAKE REPLY: after");
    // Fork: a new session with the conversation so far.
    const forked = await raw(`${srv.url}/api/sessions/${r.session_id}/resume`, "POST", headers, JSON.stringify({ fork: true }));
    expect(forked.status, forked.body).toBe(200);
    const f = JSON.parse(forked.body) as { session_id: string; forked: boolean; forked_from?: string };
    expect(f).toMatchObject({ forked: true, forked_from: r.session_id });
    expect(f.session_id).not.toBe(r.session_id);
    await mcp.callOk("kill_session", { session_id: f.session_id });
    const bad = await raw(`${srv.url}/api/sessions/${r.session_id}/answer`, "POST", headers, JSON.stringify({ choice: 1 }));
    expect(bad.status).toBeGreaterThanOrEqual(400); // nothing is blocked: answer_prompt's own error
    expect(JSON.parse(bad.body).error.code).toMatch(/^[A-Z_]+$/);
    await mcp.callOk("kill_session", { session_id: r.session_id });
  }, 30_000);

  it("reads only the read-only history tools, adopts conversations inside the roots only, reviews worktree sessions only", async () => {
    const post = (path: string, body: unknown) => raw(`${srv.url}${path}`, "POST", headers, JSON.stringify(body));
    const hist = await post("/api/read/get_execution_history", { limit: 5 });
    expect(hist.status, hist.body).toBe(200);
    expect(JSON.parse(hist.body).executions.length).toBeGreaterThan(0);
    // Clearing the history changes something: not a read.
    const clear = await post("/api/read/clear_execution_history", {});
    expect(clear.status).toBe(400);
    expect(JSON.parse(clear.body).error.code).toBe("INVALID_ARGUMENT");
    expect(JSON.parse((await post("/api/read/get_execution_history", { limit: 5 })).body).executions.length).toBeGreaterThan(0);
    const badArgs = await post("/api/read/search_conversations", { query: "" });
    expect(badArgs.status).toBe(400);
    // Adopting a conversation this server did not run: the cwd must be inside the roots.
    const outsideAdopt = await post("/api/adopt", { claude_session_id: "0d8f6c1e-0000-4000-8000-000000000000", cwd: outside });
    expect(outsideAdopt.status).toBe(403);
    expect(JSON.parse(outsideAdopt.body).error.code).toBe("PERMISSION_DENIED");
    // Review: a session without a worktree of its own is refused in words.
    const s = JSON.parse((await start({ cwd: join(root, "project") })).body) as { session_id: string };
    const review = await raw(`${srv.url}/api/sessions/${s.session_id}/review`, "GET", { cookie: headers.cookie! });
    expect(review.status).toBe(400);
    expect(JSON.parse(review.body).error).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(JSON.parse(review.body).error.message).toContain("worktree");
    await mcp.callOk("kill_session", { session_id: s.session_id });
  }, 30_000);

  it("with no roots the page starts nothing, and says how to allow it; a bad root stops the server", async () => {
    const w2 = makeWorld();
    const srv2 = await startHttpServer(w2);
    try {
      const r = await raw(
        `${srv2.url}/api/start`,
        "POST",
        await signIn(srv2.url, srv2.token),
        JSON.stringify({ cwd: w2.dir("x") }),
      );
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body).error).toMatchObject({ code: "PERMISSION_DENIED" });
      expect(JSON.parse(r.body).error.suggestion).toContain("CLAUDE_SESSIONS_WEB_ROOTS");
    } finally {
      await srv2.stop();
    }
    const bad = spawnSync(process.execPath, [CLI, "serve", "--http", "127.0.0.1:0"], {
      env: { ...w2.env, CLAUDE_SESSIONS_WEB_ROOTS: "relative/dir" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("CLAUDE_SESSIONS_WEB_ROOTS");
    w2.cleanup();
  }, 60_000);
});

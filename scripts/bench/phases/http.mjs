/**
 * http (issue #15): the Streamable HTTP transport and the web view.
 *
 * 1. Tool-call overhead, HTTP vs stdio: two servers of the same build (one `serve --http 127.0.0.1:0`, one on
 *    stdio), one session each; list_sessions and a send_message turn (wait_for_response, the fake claude's
 *    30 ms reply) are called alternately on the two, timed at the MCP client. Target: HTTP p50 ≤ stdio p50 + 5 ms.
 * 2. 20 HTTP clients (each its own MCP session) each start a session and drive it for 10 turns, all at once:
 *    every turn must complete; the server's CPU time and peak RSS over the run.
 * 3. Hook fired → the session's row updated in the browser's DOM: headless Chromium (the OS package, driven by
 *    playwright-core) signed in on the list; for each turn, the moment the Stop line appears in events.jsonl
 *    (the bench's fs.watch) to the moment a MutationObserver in the page sees the row's turn count change
 *    (both wall-clock, same machine). Target: p95 ≤ 100 ms.
 * 4. (phase http-churn) MCP session churn: 1,000 SDK clients (quick: 300), one after another, each connects (initialize) and closes
 *    the way the SDK's `client.close()` does, without a DELETE, while one observer client stays connected. Every
 *    connect must succeed (the server holds at most 256 MCP sessions and evicts the least recently used idle one);
 *    the server's RSS at the start, after each quarter and at the end, and the MCP sessions it still holds.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { EventWatcher } from "../events.mjs";
import { cpuMs, memMiB, round, rssSampler, summary } from "../stats.mjs";
import { makeWorld, sutPath } from "../world.mjs";

async function startHttp(w) {
  const proc = spawn(process.execPath, [sutPath("dist", "bin.js"), "serve", "--http", "127.0.0.1:0"], {
    env: w.env,
    cwd: w.work,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  proc.stderr.on("data", (b) => (err += b.toString()));
  const t0 = Date.now();
  let url;
  while (!(url = /serving MCP at (http:\/\/\S+)\/mcp/.exec(err)?.[1])) {
    if (proc.exitCode !== null || Date.now() - t0 > 30_000) throw new Error(`the HTTP server did not start: ${err.slice(-500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const token = readFileSync(join(w.stateDir, "token"), "utf8").trim();
  return {
    url,
    token,
    pid: proc.pid,
    async stop() {
      if (proc.exitCode !== null) return;
      const done = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await done;
    },
  };
}

async function httpClient(srv, name = "cs-bench-http") {
  const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${srv.token}` } },
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  const must = async (tool, args = {}) => {
    const res = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
    if (res.isError) throw new Error(`${tool} failed: ${res.content?.[0]?.text}`);
    return res.structuredContent ?? {};
  };
  return {
    must,
    close: () =>
      transport
        .terminateSession()
        .catch(() => {})
        .then(() => client.close()),
  };
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function overhead(cfg, log) {
  const ws = makeWorld("http-stdio");
  const wh = makeWorld("http-http");
  let srv, h, s;
  try {
    s = await ws.connect();
    srv = await startHttp(wh);
    h = await httpClient(srv);
    const idS = (await s.must("start_session", { cwd: ws.dir("s") })).session_id;
    const idH = (await h.must("start_session", { cwd: wh.dir("h") })).session_id;
    const lat = { stdio_list: [], http_list: [], stdio_send: [], http_send: [] };
    for (let i = 0; i < 3; i++) {
      await s.must("list_sessions", {});
      await h.must("list_sessions", {});
    }
    for (let i = 0; i < cfg.httpListCalls; i++) {
      lat.stdio_list.push(await timed(() => s.must("list_sessions", {})));
      lat.http_list.push(await timed(() => h.must("list_sessions", {})));
    }
    for (let i = 0; i < cfg.httpTurns; i++) {
      lat.stdio_send.push(await timed(() => s.must("send_message", { session_id: idS, message: `turn ${i}` })));
      lat.http_send.push(await timed(() => h.must("send_message", { session_id: idH, message: `turn ${i}` })));
    }
    log(`http: overhead measured (${cfg.httpListCalls} lists, ${cfg.httpTurns} turns each)`);
    const rows = [];
    for (const [tool, key] of [
      ["list_sessions", "list"],
      ["send_message turn", "send"],
    ]) {
      const a = summary(lat[`stdio_${key}`]);
      const b = summary(lat[`http_${key}`]);
      const delta = round(b.p50 - a.p50);
      rows.push({
        key: `http_overhead_${key}`,
        figure: `${tool}: HTTP vs stdio (HTTP figures)`,
        runs: b.n,
        ...b,
        notes: `stdio p50 ${a.p50} ms p95 ${a.p95} ms; HTTP − stdio at p50 ${delta} ms, at p95 ${round(b.p95 - a.p95)} ms`,
        target: "≤ +5 ms p50",
        result: delta <= 5 ? "PASS" : "MISS",
        data: { stdio: a, http: b, delta_p50_ms: delta },
      });
    }
    return rows;
  } finally {
    await h?.close().catch(() => {});
    await s?.close();
    await srv?.stop();
    ws.cleanup();
    wh.cleanup();
  }
}

async function manyClients(cfg, log) {
  const w = makeWorld("http-many", { MAX_CONCURRENT_SESSIONS: String(cfg.httpClients + 5) });
  let srv;
  const clients = [];
  try {
    srv = await startHttp(w);
    const cpu0 = cpuMs(srv.pid);
    const rss = rssSampler(srv.pid);
    const t0 = performance.now();
    const turnLat = [];
    let completed = 0;
    await Promise.all(
      Array.from({ length: cfg.httpClients }, async (_, k) => {
        const c = await httpClient(srv, `client-${k}`);
        clients.push(c);
        const id = (await c.must("start_session", { cwd: w.dir(`c${k}`) })).session_id;
        for (let i = 0; i < cfg.httpClientTurns; i++) {
          const t = performance.now();
          const r = await c.must("send_message", { session_id: id, message: `client ${k} turn ${i}`, timeout_ms: 120_000 });
          turnLat.push(performance.now() - t);
          if (r.completed && r.response === `FAKE REPLY: client ${k} turn ${i}`) completed++;
        }
        await c.must("kill_session", { session_id: id });
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuMs(srv.pid) - cpu0;
    const mem = rss.stop();
    const expected = cfg.httpClients * cfg.httpClientTurns;
    log(`http: ${cfg.httpClients} clients × ${cfg.httpClientTurns} turns in ${wall.toFixed(1)} s`);
    const s = summary(turnLat);
    return [
      {
        key: "http_many_clients",
        figure: `${cfg.httpClients} HTTP clients × ${cfg.httpClientTurns} turns, own session each (turn latency)`,
        runs: s.n,
        ...s,
        notes: `${completed}/${expected} turns completed in ${wall.toFixed(1)} s; server CPU ${(cpu / 1000).toFixed(1)} s (${round(cpu / 10 / wall, 1)} % of a core); peak RSS ${mem.peak_rss_mib} MiB`,
        target: "all complete",
        result: completed === expected ? "PASS" : "MISS",
        data: { completed, expected, wall_s: round(wall, 1), server_cpu_ms: round(cpu), ...mem, turn_latency_ms: s },
      },
    ];
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await srv?.stop();
    w.cleanup();
  }
}

function chromiumPath() {
  return [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"]
    .filter(Boolean)
    .find((p) => spawnSync(p, ["--version"], { timeout: 20_000 }).status === 0);
}

async function domLatency(cfg, log) {
  const exe = chromiumPath();
  if (!exe)
    return [
      {
        key: "http_dom",
        figure: "hook → row updated in the browser DOM",
        notes: "no chromium on this machine (apt-get install chromium)",
        result: "SKIPPED",
      },
    ];
  const { chromium } = await import("playwright-core");
  const w = makeWorld("http-dom");
  let srv, c, browser, watcher;
  try {
    srv = await startHttp(w);
    c = await httpClient(srv);
    const id = (await c.must("start_session", { cwd: w.dir("dom") })).session_id;
    browser = await chromium.launch({
      executablePath: exe,
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
      env: { ...process.env, HOME: w.home, XDG_CONFIG_HOME: join(w.home, ".config"), XDG_CACHE_HOME: join(w.home, ".cache") },
    });
    const page = await browser.newPage();
    // When each server-sent "change" reaches the page, before the page's own handler runs: splits the figure into
    // the server's part (hook line → event received) and the page's (event → row changed).
    await page.addInitScript(`(() => {
      window.__arrivals = [];
      const add = EventSource.prototype.addEventListener;
      EventSource.prototype.addEventListener = function (type, fn, opts) {
        if (type !== "change") return add.call(this, type, fn, opts);
        return add.call(this, type, (e) => {
          let turns;
          try { turns = JSON.parse(e.data).turn_count; } catch {}
          if (turns !== undefined) window.__arrivals.push({ turns: String(turns), t: performance.timeOrigin + performance.now() });
          return fn.call(this, e);
        }, opts);
      };
    })()`);
    await page.goto(`${srv.url}/login`);
    await page.fill("#token", srv.token);
    await page.click("button[type=submit]");
    await page.waitForSelector(`tr[data-id="${id}"]`);
    await page.evaluate(`(() => {
      window.__marks = [];
      const tr = document.querySelector('tr[data-id="${id}"]');
      new MutationObserver(() => window.__marks.push({ turns: tr.dataset.turns, t: performance.timeOrigin + performance.now() }))
        .observe(tr, { attributes: true, attributeFilter: ["data-turns"] });
    })()`);
    watcher = new EventWatcher(w.eventsPath(id));
    await watcher.start();
    const lat = [];
    const toPage = [];
    const inPage = [];
    let stops = 0;
    for (let i = 1; i <= cfg.httpDomTurns; i++) {
      await c.must("send_message", { session_id: id, message: `dom turn ${i}` });
      const rec = await watcher.waitFor((ev) => ev.hook_event_name === "Stop" && ++stops === i, { from: 0, timeoutMs: 10_000 });
      stops = 0;
      if (!rec) throw new Error(`no Stop for turn ${i}`);
      const hookAt = performance.timeOrigin + rec.t;
      const t0 = Date.now();
      let seen;
      while (!(seen = (await page.evaluate("window.__marks")).find((m) => m.turns === String(i)))) {
        if (Date.now() - t0 > 10_000) throw new Error(`the row never showed turn ${i}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      lat.push(seen.t - hookAt);
      const arrived = (await page.evaluate("window.__arrivals")).find((m) => m.turns === String(i));
      if (arrived) {
        toPage.push(arrived.t - hookAt);
        inPage.push(seen.t - arrived.t);
      }
    }
    log(`http: DOM latency over ${lat.length} turns`);
    const s = summary(lat);
    return [
      {
        key: "http_dom",
        figure: "hook (Stop in events.jsonl) → the row updated in the browser DOM",
        runs: s.n,
        ...s,
        notes:
          `headless Chromium ${spawnSync(exe, ["--version"], { encoding: "utf8" }).stdout.trim().split(" ")[1] ?? ""} on the list view; ` +
          `server-sent events from SessionService.subscribe; hook line → event in the page p50 ${round(summary(toPage).p50)} ms, ` +
          `event → row changed p50 ${round(summary(inPage).p50)} ms`,
        target: "p95 ≤ 100 ms",
        result: s.p95 <= 100 ? "PASS" : "MISS",
        data: { latency_ms: s, to_page_ms: summary(toPage), in_page_ms: summary(inPage), samples_ms: lat.map((x) => round(x)) },
      },
    ];
  } finally {
    watcher?.close();
    await browser?.close().catch(() => {});
    await c?.close().catch(() => {});
    await srv?.stop();
    w.cleanup();
  }
}

/** The health_check line about MCP over HTTP (absent in builds before it existed). */
async function httpHealth(c) {
  const h = await c.must("health_check", {});
  return h.checks?.find((x) => x.name === "http_clients")?.detail;
}

export async function httpChurn(cfg, log) {
  const w = makeWorld("http-churn");
  let srv, observer;
  try {
    srv = await startHttp(w);
    observer = await httpClient(srv, "observer");
    await observer.must("list_sessions", {});
    const rss = rssSampler(srv.pid);
    const at = [round(memMiB(srv.pid).rss, 1)];
    const lat = [];
    const errors = [];
    let ok = 0;
    for (let i = 1; i <= cfg.httpChurn; i++) {
      const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${srv.token}` } },
      });
      const client = new Client({ name: `churn-${i}`, version: "1.0.0" });
      const t = performance.now();
      try {
        await client.connect(transport);
        lat.push(performance.now() - t);
        ok++;
      } catch (e) {
        if (errors.length < 3) errors.push(String(e?.message ?? e).slice(0, 120));
      }
      // What an SDK client does on close(): the connection ends, no DELETE is sent.
      await client.close().catch(() => {});
      if (i % Math.ceil(cfg.httpChurn / 4) === 0 || i === cfg.httpChurn) at.push(round(memMiB(srv.pid).rss, 1));
    }
    await new Promise((r) => setTimeout(r, 1000));
    at.push(round(memMiB(srv.pid).rss, 1));
    const mem = rss.stop();
    const detail = await httpHealth(observer).catch(() => undefined);
    log(`http: ${ok}/${cfg.httpChurn} clients connected and closed; RSS ${at.join(" → ")} MiB`);
    const s = summary(lat);
    return [
      {
        key: "http_session_churn",
        figure: `${cfg.httpChurn} MCP clients connect and close without DELETE (connect latency)`,
        runs: s.n,
        ...s,
        notes: `${ok}/${cfg.httpChurn} connected${errors.length ? ` (first failure: ${errors[0]})` : ""}; server RSS ${at[0]} MiB at start → ${at.slice(1, -1).join(" → ")} at each quarter → ${at.at(-1)} MiB 1 s after; peak ${mem.peak_rss_mib} MiB; ${detail ?? "no http_clients health line"}`,
        target: "all connect",
        result: ok === cfg.httpChurn ? "PASS" : "MISS",
        data: {
          connected: ok,
          cycles: cfg.httpChurn,
          rss_mib_checkpoints: at,
          errors,
          health: detail ?? null,
          ...mem,
          connect_latency_ms: s,
        },
      },
    ];
  } finally {
    await observer?.close().catch(() => {});
    await srv?.stop();
    w.cleanup();
  }
}

export async function http(cfg, log) {
  return [...(await overhead(cfg, log)), ...(await manyClients(cfg, log)), ...(await domLatency(cfg, log))];
}

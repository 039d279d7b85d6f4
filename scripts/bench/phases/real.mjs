/**
 * real (only with --real): the real Claude Code CLI, offline, against the local mock of the
 * Messages API (tests/fixtures/mock-anthropic.ts) with a prepared HOME
 * (tests/fixtures/claude-home.ts), the same set-up as tests/e2e. Per run: start_session → ready
 * (timed), then one full turn: send_message waiting for the reply (timed; the mock answers at once
 * with `MOCK REPLY: <prompt>`, checked), then kill_session (untimed). Sequential, one server.
 *
 * The binary is $CLAUDE_PATH when set in the bench's environment, else the pinned devDependency
 * <repo>/node_modules/.bin/claude. The mock must see no stray traffic (anything but /v1/messages).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { round, summary } from "../stats.mjs";
import { makeWorld, ROOT, sutPath } from "../world.mjs";

const API_KEY = `sk-ant-api03-bench-${"k".repeat(60)}-APPROVEDKEY0123456789`;

function realClaude() {
  const path = process.env.CLAUDE_PATH || join(ROOT, "node_modules", ".bin", "claude");
  if (!existsSync(path)) return { path };
  const r = spawnSync(path, ["--version"], {
    encoding: "utf8",
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/" },
  });
  const v = /^(\d+\.\d+\.\d+)/.exec(r.stdout ?? "")?.[1];
  return { path, version: r.status === 0 ? v : undefined };
}

function skipped(cfg, why) {
  return [
    {
      key: "real",
      figure: "real CLI and mock API: start → ready, one full turn",
      runs: cfg.realRuns,
      notes: why,
      target: "reported",
      result: "SKIP",
    },
  ];
}

/**
 * Points a world at the real CLI and a fresh mock of the Messages API, with every directory trusted up front
 * (running CLIs rewrite HOME/.claude.json). Resolves to {cli, mock, close}; throws when the CLI does not run.
 */
export async function realSetup(w, dirs) {
  const cli = realClaude();
  if (!cli.version) throw new Error(`the real claude CLI at ${cli.path} does not run (npm ci installs it; or set CLAUDE_PATH)`);
  const { startMockApi } = await import(sutPath("tests", "fixtures", "mock-anthropic.ts"));
  const { prepareClaudeHome } = await import(sutPath("tests", "fixtures", "claude-home.ts"));
  const mock = await startMockApi({});
  const prepared = await prepareClaudeHome({
    home: w.home,
    apiKey: API_KEY,
    trustedDirs: dirs,
    mockUrl: mock.url,
    cliVersion: cli.version,
  });
  Object.assign(w.env, prepared.env, { CLAUDE_PATH: cli.path, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000" });
  return { cli, mock, close: () => mock.close() };
}

export async function real(cfg, log) {
  if (!cfg.real) return skipped(cfg, "skipped: needs --real");
  const cli = realClaude();
  if (!cli.version)
    return skipped(cfg, `skipped: the real claude CLI at ${cli.path} does not run (npm ci installs it; or set CLAUDE_PATH)`);
  const { startMockApi } = await import(sutPath("tests", "fixtures", "mock-anthropic.ts"));
  const { prepareClaudeHome } = await import(sutPath("tests", "fixtures", "claude-home.ts"));
  const mock = await startMockApi({});
  const w = makeWorld("real", { CLAUDE_PATH: cli.path, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000" });
  let m;
  try {
    const dirs = Array.from({ length: cfg.realRuns }, () => w.dir("real"));
    // Running CLIs rewrite HOME/.claude.json: every directory is trusted before any of them starts.
    const prepared = await prepareClaudeHome({
      home: w.home,
      apiKey: API_KEY,
      trustedDirs: dirs,
      mockUrl: mock.url,
      cliVersion: cli.version,
    });
    Object.assign(w.env, prepared.env, { CLAUDE_PATH: cli.path });
    m = await w.connect();
    const startLat = [];
    const turnLat = [];
    const problems = [];
    for (let i = 0; i < cfg.realRuns; i++) {
      const t0 = performance.now();
      const s = await m.call("start_session", { cwd: dirs[i], permission_mode: "default" });
      const t1 = performance.now();
      if (!s.ok || s.data.status !== "ready") {
        problems.push(`start ${i}: ${s.ok ? s.data.status : `${s.error?.code}: ${s.error?.message?.split("\n")[0]}`}`);
        continue;
      }
      startLat.push(t1 - t0);
      const msg = `bench turn ${i}`;
      const t2 = performance.now();
      const r = await m.call("send_message", { session_id: s.data.session_id, message: msg, timeout_ms: 60_000 });
      const t3 = performance.now();
      if (!r.ok || !r.data.completed || r.data.response !== `MOCK REPLY: ${msg}`)
        problems.push(
          `turn ${i}: ${r.ok ? `completed=${r.data.completed} response=${JSON.stringify(r.data.response)}` : `${r.error?.code}: ${r.error?.message?.split("\n")[0]}`}`,
        );
      else turnLat.push(t3 - t2);
      await m.call("kill_session", { session_id: s.data.session_id });
      if (log) log(`real: run ${i + 1}/${cfg.realRuns}: ready in ${(t1 - t0).toFixed(0)} ms, turn ${(t3 - t2).toFixed(0)} ms`);
    }
    const ss = summary(startLat);
    const st = summary(turnLat);
    const stray = mock.stray.length;
    const ok = !problems.length && !stray;
    return [
      {
        key: "real_start",
        figure: `real CLI ${cli.version} + mock API: start_session → ready`,
        runs: startLat.length,
        ...ss,
        notes: `${problems.length} problem(s); ${stray} stray request(s) at the mock`,
        target: "reported",
        result: ok ? "info" : "MISS",
        data: {
          claude: cli,
          start_ms: ss,
          start_samples_ms: startLat.map((x) => round(x)),
          problems,
          stray: mock.stray.slice(0, 20),
        },
      },
      {
        key: "real_turn",
        figure: "  same, one full turn (send_message → reply)",
        runs: turnLat.length,
        ...st,
        notes: `mock replies at once; ${mock.mainRequests().length} main API request(s)`,
        target: "reported",
        result: ok ? "info" : "MISS",
        data: { turn_ms: st, turn_samples_ms: turnLat.map((x) => round(x)) },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
    await mock.close();
  }
}

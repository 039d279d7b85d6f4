/**
 * limits (issue 33): N tmux sessions of the fake claude hit a usage limit at once (FAKE_LIMIT:<file>: an API key's
 * 429 while the file exists), with CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN=R, no jitter and a short wait.
 *
 * Reported: a prompt that hits the limit, send_message → LIMITED (the whole turn: delivery, the 429, the StopFailure
 * hook folded, the typed result), p50/p95, beside the same for an ordinary API error (TURN_FAILED) on the same
 * sessions at once; and the wake spread: the resends' times (the
 * transcripts' second user line of each prompt) from first to last, the smallest gap between two (≥ 60 s / R by
 * construction), and whether each prompt was answered exactly once.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

function transcriptLines(w, cwd) {
  const dir = join(w.home, ".claude", "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
  let files = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  } catch {
    return [];
  }
  return files
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function limits(cfg, log) {
  const n = cfg.limitSessions;
  const perMin = cfg.limitWakesPerMin;
  // Both come from bench.mjs's cfg: without them the server refuses MAX_CONCURRENT_SESSIONS=NaN at start and the phase
  // broke with "MCP error -32000: Connection closed" (they were lost when the cfg was reformatted).
  if (!Number.isInteger(n) || n < 1 || !(perMin > 0))
    throw new Error(`limits: cfg.limitSessions (${n}) and cfg.limitWakesPerMin (${perMin}) must be set in bench.mjs`);
  const w = makeWorld("limits", {
    MAX_CONCURRENT_SESSIONS: String(n + 5),
    CLAUDE_SESSIONS_IDLE_TTL_MS: "0",
    CLAUDE_SESSIONS_LOG_LEVEL: "warn",
    CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: String(perMin),
    CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0",
    CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "15000",
    ...(process.env.CS_BENCH_ON_LIMIT ? { CLAUDE_SESSIONS_ON_LIMIT: process.env.CS_BENCH_ON_LIMIT } : {}),
  });
  const dirs = Array.from({ length: n }, () => w.dir("l"));
  const gate = join(w.root, "limit-gate");
  writeFileSync(gate, "");
  let m;
  try {
    m = await w.connect();
    const ids = [];
    for (const d of dirs) ids.push((await m.must("start_session", { cwd: d })).session_id);
    const prompts = ids.map((_, i) => `bench limit s${i} FAKE_LIMIT:${gate}`);
    const detect = [];
    const problems = [];
    // The baseline: an ordinary API error on the same sessions, at once (TURN_FAILED), measured the same way.
    const base = [];
    await Promise.all(
      ids.map(async (id, i) => {
        const t = Date.now();
        const r = await m.call("send_message", {
          session_id: id,
          message: `bench fail s${i} FAKE_FAIL:500 mock`,
          timeout_ms: 120_000,
        });
        if (r.ok || r.error?.code !== "TURN_FAILED")
          return void problems.push(`s${i} baseline: ${r.ok ? "answered" : r.error?.code}`);
        base.push(Date.now() - t);
      }),
    );
    await Promise.all(
      ids.map(async (id, i) => {
        const t = Date.now();
        const r = await m.call("send_message", { session_id: id, message: prompts[i], timeout_ms: 120_000 });
        if (r.ok || r.error?.code !== "LIMITED") return void problems.push(`s${i}: ${r.ok ? "answered" : r.error?.code}`);
        detect.push(Date.now() - t);
      }),
    );
    log(`limits: ${detect.length}/${n} limited; lifting the limit`);
    rmSync(gate);
    // Every prompt answered (after its wake), or 5 minutes.
    const answered = (i) =>
      transcriptLines(w, dirs[i]).filter(
        (l) => l.type === "assistant" && JSON.stringify(l.message?.content ?? "").includes(`FAKE REPLY: ${prompts[i]}`),
      ).length;
    const t0 = Date.now();
    while (Date.now() - t0 < 300_000 && !ids.every((_, i) => answered(i) >= 1)) await sleep(500);
    await sleep(2000);
    const counts = ids.map((_, i) => answered(i));
    const once = counts.filter((c) => c === 1).length;
    const resent = ids
      .map(
        (_, i) =>
          transcriptLines(w, dirs[i])
            .filter((l) => l.type === "user" && l.message?.content === prompts[i])
            .at(-1)?.timestamp,
      )
      .filter(Boolean)
      .map((t) => Date.parse(t))
      .sort((a, b) => a - b);
    const gaps = resent.slice(1).map((t, k) => t - resent[k]);
    const span = resent.length > 1 ? resent.at(-1) - resent[0] : 0;
    const every = 60_000 / perMin;
    const ok = once === n && !problems.length && span >= (n - 1) * every - 1000;
    return [
      {
        key: "limits_detect",
        figure: `limits: send_message of a prompt that hits the limit → LIMITED (${n} tmux sessions at once, fake claude)`,
        runs: detect.length,
        ...summary(detect),
        notes: `an ordinary API error (TURN_FAILED): p50 ${round(summary(base).p50 ?? NaN)} ms, p95 ${round(summary(base).p95 ?? NaN)} ms${problems.length ? `; ${problems.slice(0, 3).join("; ")}` : ""}`,
        target: "reported",
        result: detect.length === n ? "info" : "MISS",
      },
      {
        key: "limits_wake",
        figure: `  wake spread: ${n} limited sessions, CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN ${perMin}`,
        runs: resent.length,
        value: `${round(span / 1000, 1)} s first → last`,
        notes: `smallest gap ${round(Math.min(...gaps))} ms (slot ${round(every)} ms); answered exactly once: ${once}/${n}`,
        target: `≥ ${round(((n - 1) * every) / 1000, 1)} s, each once`,
        result: ok ? "PASS" : "MISS",
        data: { counts, gaps },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
  }
}

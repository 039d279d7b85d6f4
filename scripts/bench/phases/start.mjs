/**
 * start: start_session called → it returns with the session ready (SessionStart hook seen), timed
 * at the MCP client. Sequential, one server; each session is killed (untimed) before the next
 * start, so every start sees the same conditions: one live session at most.
 */
import { round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

export async function start(cfg) {
  const w = makeWorld("start", { MAX_CONCURRENT_SESSIONS: "60" });
  let m;
  try {
    m = await w.connect();
    const lat = [];
    const notReady = [];
    for (let i = 0; i < cfg.starts; i++) {
      const cwd = w.dir("start");
      const t0 = performance.now();
      const r = await m.call("start_session", { cwd });
      const ms = performance.now() - t0;
      if (!r.ok) throw new Error(`start_session failed: ${r.error?.code}: ${r.error?.message}`);
      if (r.data.status !== "ready") notReady.push({ i, status: r.data.status });
      lat.push(ms);
      await m.must("kill_session", { session_id: r.data.session_id, force: true });
    }
    const sm = summary(lat);
    return [
      {
        key: "start",
        figure: "start: start_session → ready (fake claude)",
        runs: lat.length,
        ...sm,
        notes: notReady.length ? `${notReady.length} returned not ready` : "sequential; each killed before the next",
        target: "p50 ≤ 300 ms",
        result: sm.p50 <= 300 && !notReady.length ? "PASS" : "MISS",
        data: { latency_ms: sm, not_ready: notReady, samples_ms: lat.map((x) => round(x)) },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
  }
}

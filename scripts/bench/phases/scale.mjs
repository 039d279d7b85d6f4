/**
 * scale: N sessions started at once on one server (MAX_CONCURRENT_SESSIONS=60), then each runs T
 * turns (send_message waiting for the reply; prompts carry a small random FAKE_SLOW so the
 * sessions do not run in lockstep), all sessions at the same time. Every reply is checked
 * (`FAKE REPLY: <prompt>`). The server's memory is its VmHWM (peak resident set over the process's
 * whole life, from /proc/<pid>/status) at the end, cross-checked by sampling VmRSS every 100 ms.
 *
 * idle: right after, with the N sessions alive and idle and no call in flight, the server's CPU
 * time (utime + stime from /proc/<pid>/stat) is read at the start and end of the window. The tmux
 * server's and the fake claudes' CPU over the same window is reported as context.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { clockTicks, cpuMs, memMiB, rng, round, rssSampler, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

export async function scale(cfg, log) {
  const w = makeWorld("scale", { MAX_CONCURRENT_SESSIONS: "60" });
  let m;
  try {
    m = await w.connect();
    const pid = m.pid;
    if (!pid) throw new Error("no server pid");
    const baseline = memMiB(pid);
    const sampler = rssSampler(pid, 100);
    const N = cfg.scaleSessions;
    const T = cfg.scaleTurns;
    const r = rng(8001);

    const tStart = performance.now();
    const startLat = [];
    const startErr = [];
    const ids = (
      await Promise.all(
        Array.from({ length: N }, async (_, k) => {
          const t0 = performance.now();
          const res = await m.call("start_session", { cwd: w.dir(`s${k}`) });
          if (!res.ok) {
            startErr.push(`${res.error?.code}: ${res.error?.message?.split("\n")[0]}`);
            return undefined;
          }
          startLat.push(performance.now() - t0);
          return res.data.session_id;
        }),
      )
    ).filter(Boolean);
    const startWall = performance.now() - tStart;
    if (log) log(`scale: ${ids.length}/${N} sessions started in ${(startWall / 1000).toFixed(1)} s`);

    const plan = ids.map(() => Array.from({ length: T }, () => r.int(0, 300)));
    const turnLat = [];
    const turnErr = [];
    const tTurns = performance.now();
    await Promise.all(
      ids.map(async (id, k) => {
        for (let j = 0; j < T; j++) {
          const msg = `scale s${k} t${j} FAKE_SLOW:${plan[k][j]}`;
          const t0 = performance.now();
          const res = await m.call("send_message", { session_id: id, message: msg, timeout_ms: 120_000 });
          const ms = performance.now() - t0;
          if (!res.ok) turnErr.push(`s${k} t${j}: ${res.error?.code}: ${res.error?.message?.split("\n")[0]}`);
          else if (!res.data.completed || res.data.response !== `FAKE REPLY: ${msg}`)
            turnErr.push(
              `s${k} t${j}: completed=${res.data.completed} final=${res.data.final_state} response=${JSON.stringify(res.data.response)?.slice(0, 80)}`,
            );
          else turnLat.push(ms);
        }
      }),
    );
    const turnsWall = performance.now() - tTurns;
    const mem = sampler.stop();
    const completed = turnLat.length;
    const peakMB = round((mem.vm_hwm_mib ?? mem.peak_rss_mib) * 1.048576, 1);
    const allDone = ids.length === N && completed === N * T;
    if (log) log(`scale: ${completed}/${N * T} turns in ${(turnsWall / 1000).toFixed(1)} s; VmHWM ${peakMB} MB`);

    // ---- idle
    const listed = await m.must("list_sessions", {});
    const fakePids = listed.sessions.filter((s) => s.pid).map((s) => s.pid);
    const notIdle = listed.sessions.filter((s) => s.status !== "idle").length;
    const tmuxPid = w.tmuxServerPid();
    await sleep(1000); // let the last state writes finish
    const sumCpu = (pids) =>
      pids.reduce(
        (a, p) =>
          a +
          (() => {
            try {
              return cpuMs(p);
            } catch {
              return 0;
            }
          })(),
        0,
      );
    const c0 = cpuMs(pid);
    const t0c = tmuxPid ? cpuMs(tmuxPid) : 0;
    const f0 = sumCpu(fakePids);
    const w0 = performance.now();
    const idleRss0 = memMiB(pid).rss;
    await sleep(cfg.idleSeconds * 1000);
    const c1 = cpuMs(pid);
    const t1c = tmuxPid ? cpuMs(tmuxPid) : 0;
    const f1 = sumCpu(fakePids);
    const wall = performance.now() - w0;
    const idleRss1 = memMiB(pid).rss;
    const pct = ((c1 - c0) / wall) * 100;
    const tmuxPct = ((t1c - t0c) / wall) * 100;
    const fakePct = ((f1 - f0) / wall) * 100;
    const after = await m.must("list_sessions", {});
    const stillIdle = after.sessions.filter((s) => s.status === "idle").length;

    const sl = summary(turnLat);
    return [
      {
        key: "scale",
        figure: `scale: ${N} sessions in parallel, ${T} turns each`,
        runs: 1,
        ...sl,
        notes: `${completed}/${N * T} turns completed${turnErr.length ? ` (${turnErr.length} failed)` : ""}${startErr.length ? `, ${startErr.length} starts failed` : ""}; server RSS peak ${peakMB} MB (VmHWM; sampled ${round(mem.peak_rss_mib * 1.048576, 1)} MB, at start ${round(baseline.rss * 1.048576, 1)} MB); turns took ${(turnsWall / 1000).toFixed(1)} s; p50/p95/p99 = one turn`,
        target: "all complete; server RSS ≤ 150 MB",
        result: allDone && peakMB <= 150 ? "PASS" : "MISS",
        data: {
          sessions: N,
          turns_each: T,
          sessions_started: ids.length,
          start_errors: startErr,
          start_all_at_once_ms: summary(startLat),
          start_wall_ms: round(startWall),
          turns_completed: completed,
          turn_errors: turnErr.slice(0, 50),
          turn_latency_ms: sl,
          turns_wall_ms: round(turnsWall),
          server_rss_peak_mb: peakMB,
          server_rss_mib: {
            baseline: round(baseline.rss, 1),
            ...mem,
            unit_note: "MiB (2^20 bytes); the target is in MB (10^6 bytes)",
          },
        },
      },
      {
        key: "idle",
        figure: `idle cost: server CPU, ${ids.length} sessions idle for ${cfg.idleSeconds} s`,
        runs: 1,
        value: `${pct.toFixed(2)} %`,
        notes: `${round(c1 - c0, 0)} ms CPU in ${(wall / 1000).toFixed(1)} s; tmux server ${tmuxPct.toFixed(2)} %, fake claudes ${fakePct.toFixed(2)} % (all ${fakePids.length}); ${stillIdle}/${after.sessions.length} still idle`,
        target: "≤ 1 % of one core",
        result: pct <= 1 && notIdle === 0 ? "PASS" : "MISS",
        data: {
          server_cpu_pct: round(pct, 3),
          server_cpu_ms: round(c1 - c0, 1),
          server_cpu_total_ms_before_window: round(c0, 0),
          window_ms: round(wall, 0),
          tmux_server_cpu_pct: round(tmuxPct, 3),
          fake_claudes_cpu_pct: round(fakePct, 3),
          fake_claudes: fakePids.length,
          not_idle_before: notIdle,
          idle_after: stillIdle,
          server_rss_mib: { start: round(idleRss0, 1), end: round(idleRss1, 1) },
          clock_resolution_ms: round(1000 / clockTicks(), 1),
        },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
  }
}

/**
 * notify (issue #14): how long after a PermissionRequest hook writes its line does an MCP client that waits on
 * nothing receive the notifications/message naming the session, the tool and its input?
 *
 * The loop of permission-latency.mjs (a busy session, a primed hook per sample): the clock stops when the client's
 * notification handler runs for that sample's tool input.
 *
 * idle CPU with timers armed: N sessions on one server with every time limit on (idle TTL, busy limit, retention:
 * long values, so each live session has its idle deadline armed and each dead record its retention deadline), no
 * call in flight; the server's CPU time over the window, as the scale phase measures it.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { permissionLatency } from "../permission-latency.mjs";
import { cpuMs, round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

async function latency(cfg, log) {
  const w = makeWorld("notify");
  let m;
  try {
    m = await w.connect();
    const waiting = new Map();
    let sid;
    m.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const d = n.params.data;
      if (d?.event !== "permission" || d.session_id !== sid) return;
      const done = waiting.get(d.tool_input?.command);
      if (done) done(performance.now());
    });
    const lat = await permissionLatency(w, m, {
      cwd: w.dir("notify"),
      runs: cfg.notifyRuns,
      label: "notify",
      commandOf: (i) => `echo sample-${i}-${randomUUID().slice(0, 8)}`,
      arrival: (id, command) => {
        sid = id;
        return { at: new Promise((resolve) => waiting.set(command, resolve)), cancel: () => waiting.delete(command) };
      },
    });
    if (log) log(`notify: ${lat.length} samples`);
    return lat;
  } finally {
    await m?.close();
    w.cleanup();
  }
}

async function idleArmed(cfg, log) {
  const N = cfg.notifySessions;
  const w = makeWorld("armed", {
    MAX_CONCURRENT_SESSIONS: String(N + 10),
    CLAUDE_SESSIONS_IDLE_TTL_MS: "3600000",
    CLAUDE_SESSIONS_BUSY_MAX_MS: "3600000",
    CLAUDE_SESSIONS_RETAIN_DEAD_MS: "3600000",
  });
  let m;
  try {
    m = await w.connect();
    const ids = [];
    for (let k = 0; k < N; k += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, N - k) }, (_, j) => m.must("start_session", { cwd: w.dir(`a${k + j}`) })),
      );
      ids.push(...batch.map((s) => s.session_id));
    }
    // A few ended ones too, so retention deadlines are armed beside the idle ones.
    for (const id of ids.slice(0, 5)) await m.must("kill_session", { session_id: id, force: true });
    if (log) log(`notify/idle: ${ids.length} sessions, 5 ended; measuring ${cfg.idleSeconds} s`);
    await sleep(1500);
    const c0 = cpuMs(m.pid);
    const w0 = performance.now();
    await sleep(cfg.idleSeconds * 1000);
    const c1 = cpuMs(m.pid);
    const wall = performance.now() - w0;
    return {
      sessions: ids.length,
      live: ids.length - 5,
      cpu_ms: round(c1 - c0),
      wall_ms: round(wall),
      pct: round(((c1 - c0) / wall) * 100, 3),
    };
  } finally {
    await m?.close();
    w.cleanup();
  }
}

export async function notify(cfg, log) {
  const lat = await latency(cfg, log);
  const sl = summary(lat);
  const idle = await idleArmed(cfg, log);
  return [
    {
      key: "notify",
      figure: "notify: PermissionRequest hook line → client's notifications/message",
      runs: lat.length,
      ...sl,
      notes: "a client waiting on nothing; from the payload handed to the primed hook to the client's handler",
      target: "p95 ≤ 100 ms",
      result: sl.p95 !== undefined && sl.p95 <= 100 ? "PASS" : "MISS",
      data: { latency_ms: sl },
    },
    {
      key: "idle_armed",
      figure: `idle CPU, ${idle.sessions} sessions, every time limit armed`,
      runs: 1,
      value: `${idle.pct}%`,
      notes: `${idle.live} idle sessions (idle TTL and busy limit on) and ${idle.sessions - idle.live} dead (retention armed); server CPU ${idle.cpu_ms} ms over ${(idle.wall_ms / 1000).toFixed(1)} s`,
      target: "≤ 1%",
      result: idle.pct <= 1 ? "PASS" : "MISS",
      data: idle,
    },
  ];
}

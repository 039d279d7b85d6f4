/**
 * notify (issue #14): how long after a PermissionRequest hook writes its line does an MCP client that waits on
 * nothing receive the notifications/message naming the session, the tool and its input?
 *
 * One session is kept busy by a real `FAKE_SLOW:600000` turn of the fake claude. For each sample a hook process is
 * started exactly as Claude Code runs one and held at its `paste` (lock taken, line about to be written); the
 * clock starts when the PermissionRequest payload is handed over and stops when the client's notification
 * handler runs for that sample's tool input. A PostToolUse line then puts the session back to busy.
 *
 * idle CPU with timers armed: N sessions on one server with every time limit on (idle TTL, busy limit, retention:
 * long values, so each live session has its idle deadline armed and each dead record its retention deadline), no
 * call in flight; the server's CPU time over the window, as the scale phase measures it.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { appendViaHook, primedHook } from "../events.mjs";
import { cpuMs, round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

async function latency(cfg, log) {
  const w = makeWorld("notify");
  let m;
  try {
    m = await w.connect();
    const cwd = w.dir("notify");
    const s = await m.must("start_session", { cwd });
    const id = s.session_id;
    const events = w.eventsPath(id);
    const common = {
      session_id: s.claude_session_id,
      transcript_path: `${w.home}/.claude/projects/x/${s.claude_session_id}.jsonl`,
      cwd,
      permission_mode: "default",
    };
    await m.must("send_message", {
      session_id: id,
      message: "FAKE_SLOW:600000 keep this session busy",
      wait_for_response: false,
    });
    const waiting = new Map();
    m.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const d = n.params.data;
      if (d?.event !== "permission" || d.session_id !== id) return;
      const done = waiting.get(d.tool_input?.command);
      if (done) done(performance.now());
    });
    const lat = [];
    for (let i = 0; i < cfg.notifyRuns; i++) {
      const command = `echo sample-${i}-${randomUUID().slice(0, 8)}`;
      const got = new Promise((resolve) => waiting.set(command, resolve));
      const hook = await primedHook(w.hookScript, events);
      const tA = performance.now();
      await hook.write({ ...common, hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: { command } });
      const tN = await Promise.race([got, sleep(5000).then(() => undefined)]);
      waiting.delete(command);
      if (tN === undefined) throw new Error(`no notification within 5 s for sample ${i}`);
      lat.push(tN - tA);
      await appendViaHook(w.hookScript, events, {
        ...common,
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: { command },
        tool_response: { stdout: "" },
      });
      await sleep(20);
    }
    if (log) log(`notify: ${lat.length} samples`);
    await m.call("kill_session", { session_id: id, force: true });
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

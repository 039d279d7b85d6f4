/**
 * detect: how long after Claude's Stop hook writes its line does wait_for_completion return?
 *
 * A. ours, precisely: one session is kept busy by a real `FAKE_SLOW:600000` turn of the fake claude;
 *    the bench then appends synthetic UserPromptSubmit / Stop pairs to its events.jsonl through the
 *    hook command from the session's settings.json, run exactly as Claude Code runs a hook (`/bin/sh -c '<command>'
 *    '<events>'`, payload on stdin). For each Stop: a wait_for_completion call is made and left
 *    pending (25–45 ms; checked afterwards through the waited_ms it reports and the reply text it
 *    returns). Meanwhile the hook process is started and held at its `tr`, which waits for the
 *    payload on stdin (lock taken, file about to be appended). The clock starts just before the
 *    payload is handed over — the line is written at once — and stops when the call returns to
 *    the MCP client. The fake's own timing is not in the figure, nor the hook's process start-up
 *    (five execs of sh/flock/tr, reported beside it: it happens before the line is written).
 *
 * B. the polling baselines, on real turns: sessions run real `FAKE_SLOW:<150–350 ms>` turns. For
 *    each turn a wait_for_completion call and two capture-pane pollers (every 1000 ms and every
 *    100 ms, each with a random phase) run side by side. Each detector's latency is measured from
 *    the moment the Stop line appeared in events.jsonl (the bench's own fs.watch on the file).
 *    Our detector is measured the same way on the same turns, so the ratio compares like with like.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { EventWatcher, appendViaHook, primedHook } from "../events.mjs";
import { pollUntilIdle } from "../poller.mjs";
import { rng, round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

async function statusOf(m, id) {
  const l = await m.must("list_sessions", {});
  return l.sessions.find((s) => s.session_id === id)?.status;
}

async function ours(w, m, turns, log) {
  const cwd = w.dir("detect");
  const s = await m.must("start_session", { cwd });
  const id = s.session_id;
  const events = w.eventsPath(id);
  const common = {
    session_id: s.claude_session_id,
    transcript_path: `${w.home}/.claude/projects/x/${s.claude_session_id}.jsonl`,
    cwd,
  };
  await m.must("send_message", { session_id: id, message: "FAKE_SLOW:600000 keep this session busy", wait_for_response: false });
  if ((await statusOf(m, id)) !== "busy") throw new Error("the detect session did not become busy");
  const r = rng(6001);
  const ew = new EventWatcher(events);
  await ew.start();
  const lat = [];
  const hook = [];
  const fromLine = [];
  let discarded = 0;
  const reasons = [];
  let i = 0;
  while (lat.length < turns) {
    i += 1;
    if (i > turns * 2) throw new Error(`too many discarded detect samples (${discarded})`);
    if (i > 1) {
      // Make the session busy again with a synthetic prompt, and wait until the server folded it.
      await appendViaHook(w.hookScript, events, {
        ...common,
        prompt_id: randomUUID(),
        permission_mode: "default",
        hook_event_name: "UserPromptSubmit",
        prompt: `synthetic prompt ${i}`,
      });
      const end = Date.now() + 5000;
      while ((await statusOf(m, id)) !== "busy") {
        if (Date.now() > end) throw new Error("the server did not fold a synthetic UserPromptSubmit within 5 s");
        await sleep(2);
      }
    }
    const reply = `synthetic reply ${i}`;
    const mark = ew.count;
    let tR = 0;
    const tCall = performance.now();
    const pending = m
      .call("wait_for_completion", { session_id: id, timeout_ms: 30_000 })
      .then((x) => ((tR = performance.now()), x));
    // The hook process starts meanwhile and stops at its `tr`, waiting for the payload.
    const hookProc = await primedHook(w.hookScript, events);
    await sleep(Math.max(0, r.int(25, 45) - (performance.now() - tCall)));
    const tA = performance.now();
    const tH = await hookProc.write({
      ...common,
      prompt_id: randomUUID(),
      permission_mode: "default",
      effort: { level: "high" },
      hook_event_name: "Stop",
      stop_hook_active: false,
      last_assistant_message: reply,
      background_tasks: [],
      session_crons: [],
    });
    const res = await pending;
    const seen = await ew.waitFor((e) => e.hook_event_name === "Stop", { from: mark, timeoutMs: 5000 });
    if (!res.ok) throw new Error(`wait_for_completion failed: ${res.error?.code} ${res.error?.message}`);
    // Counted only if the call was really pending when the Stop landed, and returned that turn.
    const why = !res.data.completed
      ? "not completed"
      : res.data.last_response !== reply
        ? "another turn's reply"
        : res.data.waited_ms < 15
          ? `not pending (waited_ms ${res.data.waited_ms})`
          : !hookProc.ready
            ? "hook not primed in 2 s"
            : undefined;
    if (why) {
      discarded += 1;
      reasons.push(why);
      continue;
    }
    lat.push(tR - tA);
    hook.push(hookProc.readyAt - hookProc.spawnedAt + (tH - tA)); // its run, less the time it was held
    if (seen) fromLine.push(tR - seen.t);
  }
  ew.close();
  if (log) log(`detect/ours: ${turns} samples, ${discarded} discarded`);
  await m.call("kill_session", { session_id: id, force: true });
  return { lat, hook, fromLine, discarded, reasons };
}

async function pollers(w, m, sessions, turnsEach) {
  const out = { ours: [], poll1000: [], poll100: [], polls1000: 0, polls100: 0, failures: [] };
  const r = rng(6002);
  await Promise.all(
    Array.from({ length: sessions }, async (_, k) => {
      const s = await m.must("start_session", { cwd: w.dir(`poll${k}`) });
      const id = s.session_id;
      const ew = new EventWatcher(w.eventsPath(id));
      await ew.start();
      try {
        for (let i = 0; i < turnsEach; i++) {
          const slow = r.int(150, 350);
          const mark = ew.count;
          const sent = await m.call("send_message", {
            session_id: id,
            message: `FAKE_SLOW:${slow} detect turn ${k}.${i}`,
            wait_for_response: false,
          });
          if (!sent.ok) throw new Error(`send_message failed: ${sent.error?.code} ${sent.error?.message}`);
          const waitP = m
            .call("wait_for_completion", { session_id: id, timeout_ms: 30_000 })
            .then((x) => ({ x, t: performance.now() }));
          const common = { socket: w.socket, home: w.home, sessionId: id, timeoutMs: 30_000 };
          const p1000 = pollUntilIdle({ ...common, periodMs: 1000, phaseMs: r.next() * 1000 });
          const p100 = pollUntilIdle({ ...common, periodMs: 100, phaseMs: r.next() * 100 });
          const stopP = ew.waitFor((e) => e.hook_event_name === "Stop", { from: mark, timeoutMs: 30_000 });
          const [wr, a, b, st] = await Promise.all([waitP, p1000, p100, stopP]);
          if (!st || !wr.x.ok || !wr.x.data.completed || a.t === undefined || b.t === undefined) {
            out.failures.push({
              session: k,
              turn: i,
              stop: Boolean(st),
              wait: wr.x.ok ? wr.x.data : wr.x.error,
              poll1000: a.t !== undefined,
              poll100: b.t !== undefined,
            });
            continue;
          }
          out.ours.push(wr.t - st.t);
          out.poll1000.push(a.t - st.t);
          out.poll100.push(b.t - st.t);
          out.polls1000 += a.polls;
          out.polls100 += b.polls;
        }
      } finally {
        ew.close();
      }
      await m.call("kill_session", { session_id: id, force: true });
    }),
  );
  return out;
}

export async function detect(cfg, log) {
  const w = makeWorld("detect");
  let m;
  try {
    m = await w.connect();
    const a = await ours(w, m, cfg.detectTurns, log);
    const perSession = Math.ceil(cfg.detectTurns / cfg.pollSessions);
    const b = await pollers(w, m, cfg.pollSessions, perSession);
    const sa = summary(a.lat);
    const sb = summary(b.ours);
    const s1000 = summary(b.poll1000);
    const s100 = summary(b.poll100);
    const ratio = (x) => (sb.p50 > 0 ? round(x.p50 / sb.p50, 0) : undefined);
    const bRuns = b.ours.length;
    const pass = sa.p50 <= 20 && sa.p99 <= 100;
    return [
      {
        key: "detect",
        figure: "detect: Stop hook written → wait_for_completion returns",
        runs: sa.n,
        ...sa,
        notes: `+ the hook process's own run (spawn → exit, less the hold) p50 ${summary(a.hook).p50} ms; from the line seen by a watcher p50 ${summary(a.fromLine).p50} ms, p99 ${summary(a.fromLine).p99} ms${a.discarded ? `; ${a.discarded} discarded (wait not pending)` : ""}`,
        target: "p50 ≤ 20 ms, p99 ≤ 100 ms",
        result: pass ? "PASS" : "MISS",
        data: {
          latency_ms: summary(a.lat),
          hook_sh_ms: summary(a.hook),
          from_line_seen_ms: summary(a.fromLine),
          discarded: a.discarded,
          discard_reasons: a.reasons,
          samples_ms: a.lat.map((x) => round(x)),
        },
      },
      {
        key: "detect_poll_1000",
        figure: "  same, capture-pane poller every 1000 ms",
        runs: s1000.n,
        ...s1000,
        notes: `${ratio(s1000)}× ours on the same turns (ours p50 ${sb.p50} ms, p99 ${sb.p99} ms, from Stop line seen)`,
        target: "(ratio to ours)",
        result: "info",
        data: { latency_ms: s1000, polls: b.polls1000, samples_ms: b.poll1000.map((x) => round(x)) },
      },
      {
        key: "detect_poll_100",
        figure: "  same, capture-pane poller every 100 ms",
        runs: s100.n,
        ...s100,
        notes: `${ratio(s100)}× ours on the same turns; ${b.failures.length} turn(s) failed`,
        target: "(ratio to ours)",
        result: b.failures.length ? "MISS" : "info",
        data: {
          latency_ms: s100,
          polls: b.polls100,
          ours_same_turns_ms: sb,
          ours_same_turns_samples_ms: b.ours.map((x) => round(x)),
          samples_ms: b.poll100.map((x) => round(x)),
          sessions: cfg.pollSessions,
          turns: bRuns,
          failures: b.failures,
        },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
  }
}

/**
 * parallel (issue #9): N sessions started at once, then every session sends its prompts at the same time as the
 * others (each: send_message → its UserPromptSubmit → wait for the turn → next). Timed: send_message called →
 * UserPromptSubmit in the session's events.jsonl. Counted: Enter presses the server had to repeat (its log says
 * so) and prompts lost. With --real the same runs against the real CLI and the mock API.
 */
import { EventWatcher } from "../events.mjs";
import { round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";
import { realSetup } from "./real.mjs";

const RETRY_LINE = /was not taken|no UserPromptSubmit after Enter/;

async function run(n, sends, log, real) {
  const w = makeWorld(`parallel-${n}${real ? "-real" : ""}`, { MAX_CONCURRENT_SESSIONS: String(n + 2) });
  let m;
  let setup;
  const watchers = [];
  try {
    const dirs = Array.from({ length: n }, (_, i) => w.dir(`p${i}`));
    if (real) setup = await realSetup(w, dirs);
    m = await w.connect();
    let retries = 0;
    m.onStderrLine((l) => {
      if (RETRY_LINE.test(l)) retries++;
    });
    const started = await Promise.all(
      dirs.map((cwd) => m.must("start_session", { cwd, ...(real ? { permission_mode: "default" } : {}) })),
    );
    const lat = [];
    // The first send of each session meets a CLI that has just started (2.1.330 works 1–2 s after drawing its box).
    const firstLat = [];
    const laterLat = [];
    let lost = 0;
    const reply = real ? "MOCK REPLY: " : "FAKE REPLY: ";
    let wrong = 0;
    await Promise.all(
      started.map(async (s, i) => {
        const ew = new EventWatcher(w.eventsPath(s.session_id));
        watchers.push(ew);
        await ew.start();
        for (let k = 0; k < sends; k++) {
          const msg = `session ${i} prompt ${k}: please answer briefly`;
          const mark = ew.count;
          const t0 = performance.now();
          const call = m.call("send_message", { session_id: s.session_id, message: msg, wait_for_response: false });
          const ups = await ew.waitFor((e) => e.hook_event_name === "UserPromptSubmit", { from: mark, timeoutMs: 20_000 });
          if (ups) {
            lat.push(ups.t - t0);
            (k === 0 ? firstLat : laterLat).push(ups.t - t0);
          } else lost++;
          await call;
          const done = await m.call("wait_for_completion", { session_id: s.session_id, timeout_ms: 60_000 });
          if (!done.ok || done.data.last_response !== `${reply}${msg}`) wrong++;
        }
      }),
    );
    // End the sessions before the world goes (a real CLI still writing into HOME would race its removal).
    await Promise.all(started.map((x) => m.call("kill_session", { session_id: x.session_id, force: true })));
    const st = summary(lat);
    const first = summary(firstLat);
    const later = summary(laterLat);
    const ok = retries === 0 && lost === 0 && wrong === 0 && st.p95 <= 2 * st.p50;
    log(
      `parallel ${n}${real ? " (real)" : ""}: p50 ${round(st.p50)} ms, p95 ${round(st.p95)} ms, max ${round(st.max)} ms, ${retries} retries, ${lost} lost`,
    );
    return {
      key: `parallel-${n}${real ? "-real" : ""}`,
      figure: `parallel delivery${real ? " (real CLI + mock API)" : ""}: ${n} sessions started at once × ${sends} sends, send → UserPromptSubmit`,
      runs: lat.length,
      p50: st.p50,
      p95: st.p95,
      p99: st.max,
      notes: `max ${round(st.max)} ms; Enter retries ${retries}; lost ${lost}; wrong replies ${wrong}; first send of each session p50 ${round(first.p50)} / max ${round(first.max)} ms, later sends p50 ${round(later.p50)} / p95 ${round(later.p95)} ms`,
      target: "0 retries, p95 ≤ 2 × p50",
      result: ok ? "PASS" : "MISS",
      data: { n, sends, retries, lost, wrong, ...st, first_send: first, later_sends: later },
    };
  } finally {
    for (const ew of watchers) ew.close?.();
    await m?.close();
    w.cleanup();
    await setup?.close();
  }
}

export async function parallel(cfg, log) {
  const rows = [];
  for (const n of cfg.parallelSessions) rows.push(await run(n, cfg.parallelSends, log, false));
  if (cfg.real) for (const n of cfg.parallelSessions) rows.push(await run(n, cfg.parallelSends, log, true));
  return rows;
}

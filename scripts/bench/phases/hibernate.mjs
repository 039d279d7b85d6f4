/**
 * hibernate (issue #23): N tmux sessions on one server with CLAUDE_SESSIONS_MAX_LIVE=M, 3 turns each, the 3·N turns in
 * a random order (each session's own turns in order), run by M−1 workers at once. A session's first turn is a cold
 * start (start_session, then the prompt); a later one finds it hibernated by MAX_LIVE pressure (or still live) and
 * send_message wakes it. With --real: the real CLI against the mock API (replies `MOCK REPLY: <prompt>`, and each
 * request must carry the session's earlier prompt: the conversation was kept); without: the fake claude.
 *
 * Reported: replies right out of 3·N; prompts lost or delivered twice (UserPromptSubmit per prompt in the events
 * logs, and main requests per prompt at the mock); the peak number of live Claude processes (must stay ≤ M) and the peak RSS
 * of every process under the tmux server (Claude and its launcher) and of the server; wake time (`wake_ms`) p50/p95
 * next to a cold start_session → ready in the same run, and the whole turn of each kind.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { memMiB, rng, round, rssSampler, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";
import { realSetup } from "./real.mjs";

/** Every descendant pid of `root` (from /proc/<pid>/task/<tid>/children). */
function descendants(root) {
  const out = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    let kids = [];
    try {
      kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      /* gone */
    }
    for (const k of kids) {
      out.push(k);
      stack.push(k);
    }
  }
  return out;
}

/** Whether a process is a Claude Code CLI (the real binary or the fake's script): argv[0] or argv[1] is `claude`. */
function isClaude(pid) {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return argv.slice(0, 2).some((a) => /(^|\/)claude(\.exe)?$/.test(a));
  } catch {
    return false;
  }
}

/** Samples the Claude processes under the tmux server (outermost ones: the live sessions) and the RSS of everything under it. */
function treeSampler(tmuxPid, everyMs = 250) {
  let peakLive = 0;
  let peakRss = 0;
  const tick = () => {
    const pid = tmuxPid();
    if (!pid) return;
    let rss = 0;
    const claude = new Set();
    let live = 0;
    for (const p of descendants(pid)) {
      try {
        const r = memMiB(p).rss;
        if (Number.isFinite(r)) rss += r;
      } catch {
        /* gone */
      }
      if (isClaude(p)) {
        claude.add(p);
        let ppid;
        try {
          const st = readFileSync(`/proc/${p}/stat`, "utf8");
          ppid = Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
        } catch {
          /* gone */
        }
        if (!claude.has(ppid)) live += 1;
      }
    }
    peakLive = Math.max(peakLive, live);
    peakRss = Math.max(peakRss, rss);
  };
  const t = setInterval(tick, everyMs);
  return {
    stop() {
      clearInterval(t);
      tick();
      return { peak_live: peakLive, peak_rss_mib: round(peakRss, 1) };
    },
  };
}

export async function hibernate(cfg, log) {
  const n = cfg.hibernateSessions;
  const max = cfg.hibernateLive;
  const w = makeWorld("hibernate", {
    CLAUDE_SESSIONS_MAX_LIVE: String(max),
    MAX_CONCURRENT_SESSIONS: String(max + 5),
    CLAUDE_SESSIONS_IDLE_TTL_MS: "0",
    CLAUDE_SESSIONS_LOG_LEVEL: "warn",
  });
  const dirs = Array.from({ length: n }, () => w.dir("h"));
  let real;
  let m;
  try {
    if (cfg.real) real = await realSetup(w, dirs);
    const reply = (p) => `${real ? "MOCK" : "FAKE"} REPLY: ${p}`;
    m = await w.connect();
    const serverRss = rssSampler(m.pid, 250);
    const tree = treeSampler(() => w.tmuxServerPid());
    // 3 turns per session, shuffled; each session's turns stay in their order.
    const r = rng(23);
    const order = [];
    const left = Array.from({ length: n }, () => 3);
    while (order.length < 3 * n) {
      const i = r.int(0, n - 1);
      if (left[i] === 0) continue;
      order.push([i, 3 - left[i]]);
      left[i] -= 1;
    }
    const ids = new Array(n);
    const prompts = Array.from({ length: n }, (_, i) => [0, 1, 2].map((k) => `bench hibernate s${i} turn ${k + 1}`));
    const chain = Array.from({ length: n }, () => Promise.resolve());
    const cold = [];
    const coldTurn = [];
    const wake = [];
    const wokeTurn = [];
    const liveTurn = [];
    const problems = [];
    let right = 0;
    let next = 0;
    const t0 = performance.now();
    const one = async ([i, k]) => {
      const p = prompts[i][k];
      if (k === 0) {
        const a = performance.now();
        const s = await m.call("start_session", { cwd: dirs[i], permission_mode: "default" });
        if (!s.ok) return void problems.push(`start s${i}: ${s.error?.code}: ${s.error?.message?.split("\n")[0]}`);
        cold.push(performance.now() - a);
        ids[i] = s.data.session_id;
      }
      if (!ids[i]) return void problems.push(`s${i} turn ${k + 1}: never started`);
      const a = performance.now();
      const res = await m.call("send_message", { session_id: ids[i], message: p, timeout_ms: 120_000 });
      const ms = performance.now() - a;
      if (!res.ok) return void problems.push(`s${i} turn ${k + 1}: ${res.error?.code}: ${res.error?.message?.split("\n")[0]}`);
      if (res.data.completed && res.data.response === reply(p)) right += 1;
      else
        problems.push(
          `s${i} turn ${k + 1}: completed=${res.data.completed} response=${JSON.stringify(res.data.response)?.slice(0, 80)}`,
        );
      if (k === 0) coldTurn.push(ms);
      else if (res.data.woke) {
        wake.push(res.data.wake_ms);
        wokeTurn.push(ms);
      } else liveTurn.push(ms);
    };
    const worker = async () => {
      while (next < order.length) {
        const item = order[next++];
        const [i] = item;
        const prev = chain[i];
        const mine = prev.then(() => one(item)).catch((e) => void problems.push(`s${i}: ${String(e)}`));
        chain[i] = mine;
        await mine;
        if ((right + problems.length) % Math.max(1, Math.floor(n / 2)) === 0)
          log(`hibernate: ${right + problems.length}/${3 * n} turns done`);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, max - 1) }, worker));
    const wall = (performance.now() - t0) / 1000;
    const mem = serverRss.stop();
    const t = tree.stop();
    // Each prompt once: in the events logs (UserPromptSubmit), and at the mock (main requests).
    let lost = 0;
    let dup = 0;
    let historyKept = 0;
    for (let i = 0; i < n; i++) {
      if (!ids[i]) continue;
      const ev = readFileSync(join(w.stateDir, ids[i], "events.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l.includes('"UserPromptSubmit"'))
        .map((l) => JSON.parse(l).prompt);
      for (const [k, p] of prompts[i].entries()) {
        const c = ev.filter((x) => x === p).length;
        if (c === 0) lost += 1;
        if (c > 1) dup += 1;
        if (real) {
          const reqs = real.mock.mainRequests().filter((q) => q.lastUserText === p);
          if (reqs.length > 1) dup += 1;
          const texts = JSON.stringify(reqs[0]?.body?.messages ?? []);
          if (k === 0 || texts.includes(prompts[i][k - 1])) historyKept += 1;
        }
      }
    }
    const stray = real?.mock.stray.length ?? 0;
    const ok = right === 3 * n && !lost && !dup && t.peak_live <= max && !stray;
    const who = real ? `real CLI ${real.cli.version} + mock` : "fake claude";
    const ws = summary(wake);
    const cs = summary(cold);
    return [
      {
        key: "hibernate",
        figure: `hibernate: ${n} tmux sessions, MAX_LIVE ${max}, 3 turns each in random order (${who})`,
        runs: 3 * n,
        value: `${right}/${3 * n} right`,
        notes: `${lost} lost, ${dup} duplicated; ${real ? `history kept in ${historyKept}/${3 * n}; ` : ""}peak live Claude processes ${t.peak_live}; ${round(wall, 1)} s; ${problems.length} problem(s)${stray ? `; ${stray} stray` : ""}`,
        target: `all right, 0 lost/dup, ≤ ${max} live`,
        result: ok ? "PASS" : "MISS",
        data: { problems: problems.slice(0, 20), peak_live: t.peak_live, wall_s: round(wall, 1) },
      },
      {
        key: "hibernate_rss",
        figure: "  peak RSS: every process under the tmux server / the server",
        value: `${t.peak_rss_mib} MiB / ${mem.peak_rss_mib} MiB`,
        notes: `at most ${max} live of ${n}`,
        target: "reported",
        result: "info",
        data: { tree: t, server: mem },
      },
      {
        key: "hibernate_wake",
        figure: "  wake (wake_ms: hibernated → ready)",
        runs: wake.length,
        ...ws,
        notes: `cold start_session → ready p50 ${round(cs.p50 ?? NaN)} ms, p95 ${round(cs.p95 ?? NaN)} ms (${cold.length} runs)`,
        target: "reported",
        result: "info",
        data: { wake_ms: ws, cold_ms: cs },
      },
      {
        key: "hibernate_woke_turn",
        figure: "  turn on a hibernated session (wake + prompt → reply)",
        runs: wokeTurn.length,
        ...summary(wokeTurn),
        notes: `cold first turn (after start) p50 ${round(summary(coldTurn).p50 ?? NaN)} ms; turn on a live session p50 ${round(summary(liveTurn).p50 ?? NaN)} ms (${liveTurn.length})`,
        target: "reported",
        result: "info",
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
    await real?.close();
  }
}

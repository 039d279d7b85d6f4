/**
 * first-answer (only with --real; issue #23's speed table): the real CLI against the mock API, every row in one
 * run, interleaved repetition by repetition, each beside a bare `claude -p` (same CLI, mock, HOME):
 *  - bare `claude -p "<prompt>"`: spawn → the answer on its stdout (no hooks; what a one-shot server runs);
 *  - the interactive floor (issue 38, ../floor.mjs): the CLI alone in a private tmux pane, the prompt on its command
 *    line, a Stop hook only, no server: new-session → Stop; the cold tmux rows are also given ÷ this floor;
 *  - run_task cold (headless): the call → its result (keep_session true, so the follow-up row can use it);
 *  - tmux start + send, cold: start_session {backend tmux} + send_message (waits for the reply);
 *  - tmux start_session {prompt}, cold: the prompt given at start (the CLI's argument), then wait_for_completion;
 *  - the same with a warm spare: a server with CLAUDE_SESSIONS_WARM_POOL=1, one cwd (each run takes the spare the
 *    previous one left; the first, cold, is not counted);
 *  - follow-up turn: send_message on the tmux session vs on the run_task (headless) session;
 *  - the tmux follow-up and the warm spare again as send_message {wait_for_response: false} + wait_for_completion,
 *    which returns at the turn's end (Stop) without waiting for the transcript line the turn's usage comes from;
 *  - 4 first answers in parallel on tmux (4 × start + send at once, until the last reply) vs 4 `claude -p` at once,
 *    and vs 4 interactive floors at once (start_session {prompt} + wait_for_completion ×4 against 4 floors);
 *  - the floor's follow-up (issue 38): the floor's pane after its answer, a second prompt typed and Entered once it
 *    shows → its Stop; the tmux follow-up rows are also given ÷ this;
 *  - server spawn → tools/list: what an MCP client pays to start this server, initialize and list its tools (the
 *    world's private state directory, as a user's), beside the one-tool SDK peer (scripts/bench/peer-server.mjs);
 *    the server's CPU time until then in the notes (load does not stretch it).
 * Each row: p50/p95 over cfg.realRuns and its p50's ratio to bare `claude -p`'s p50.
 */
import { claudeP, cpuMs, okCall, peerList, tmuxWithPrompt } from "../calls.mjs";
import { round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";
import { realSetup } from "./real.mjs";
import { makeFloor } from "../floor.mjs";

const PAR = 4;

/** start_session (tmux) + send_message waiting for the reply; resolves to the session id. */
async function tmuxFirst(m, cwd, prompt) {
  const s = await okCall(m, "start_session", { cwd, backend: "tmux", permission_mode: "default" });
  await okCall(
    m,
    "send_message",
    { session_id: s.session_id, message: prompt, timeout_ms: 60_000 },
    (d) => d.response === `MOCK REPLY: ${prompt}`,
  );
  return s.session_id;
}

/** send_message {wait_for_response: false}, then wait_for_completion: the answer at the turn's end (Stop), without
 * waiting for the transcript's reply line that the turn's usage is read from (it follows in the history). */
async function sendThenWait(m, id, prompt) {
  await okCall(m, "send_message", { session_id: id, message: prompt, wait_for_response: false });
  await okCall(
    m,
    "wait_for_completion",
    { session_id: id, timeout_ms: 60_000 },
    (d) => d.last_response === `MOCK REPLY: ${prompt}`,
  );
}

async function spareReady(m, cwd) {
  for (const t0 = Date.now(); Date.now() - t0 < 60_000; await new Promise((r) => setTimeout(r, 100))) {
    const l = await m.call("list_sessions", {});
    if (l.ok && l.data.sessions.some((x) => x.spare && x.cwd === cwd && x.status === "ready")) return;
  }
  throw new Error("no warm spare became ready within 60 s");
}

export async function firstAnswer(cfg, log) {
  if (!cfg.real)
    return [
      {
        key: "first_answer",
        figure: "first answer: claude-sessions vs bare `claude -p` (real CLI)",
        notes: "skipped: needs --real",
        target: "reported",
        result: "SKIP",
      },
    ];
  const runs = cfg.realRuns;
  const w = makeWorld("first-answer", { MAX_CONCURRENT_SESSIONS: "30" });
  const names = [
    "bare",
    "floor",
    "task",
    ...Array.from({ length: PAR }, (_, i) => `parf${i}`),
    ...Array.from({ length: PAR }, (_, i) => `parq${i}`),
    "tmux",
    "tmuxp",
    "pool",
    ...Array.from({ length: PAR }, (_, i) => `par${i}`),
    ...Array.from({ length: PAR }, (_, i) => `parp${i}`),
  ];
  const dirs = Object.fromEntries(names.map((n) => [n, w.dir(n)]));
  let setup;
  let m;
  let mw;
  let floor;
  try {
    setup = await realSetup(w, Object.values(dirs));
    const pEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      LANG: "C.UTF-8",
      ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
    };
    const cli = setup.cli.path;
    m = await w.connect();
    floor = await makeFloor({
      root: w.root,
      home: w.home,
      env: Object.fromEntries(Object.entries(pEnv).filter(([k]) => k !== "PATH")),
      cli,
      socket: `${w.socket}-floor`,
    });
    mw = await w.connect({ CLAUDE_SESSIONS_WARM_POOL: "1" });
    const t = {
      bare: [],
      floor: [],
      task: [],
      tmux: [],
      tmuxPrompt: [],
      warm: [],
      warmAtStop: [],
      followTmux: [],
      followTmuxAtStop: [],
      followHeadless: [],
      parTmux: [],
      parBare: [],
      spawn: [],
      spawnPeer: [],
      floorFollow: [],
      parFloor: [],
      parTmuxPrompt: [],
    };
    const cpu = { spawn: [], spawnPeer: [] };
    // Warm-ups, not counted: the CLI's first start after install, and the pool's first (cold) take.
    await claudeP(cli, dirs.bare, pEnv, "warm-up");
    await okCall(mw, "kill_session", { session_id: await tmuxFirst(mw, dirs.pool, "pool warm-up"), force: true });
    await floor.run(dirs.floor, "floor warm-up");
    for (let i = 0; i < runs; i++) {
      const time = async (k, fn) => {
        const t0 = performance.now();
        const out = await fn();
        t[k].push(performance.now() - t0);
        return out;
      };
      t.bare.push(await claudeP(cli, dirs.bare, pEnv, `bare ${i}`));
      const [f1, f2] = await floor.run(dirs.floor, `floor ${i}`, `floor again ${i}`);
      t.floor.push(f1);
      t.floorFollow.push(f2);
      const task = await time("task", () =>
        okCall(
          m,
          "run_task",
          { cwd: dirs.task, prompt: `task ${i}`, permission_mode: "default", keep_session: true, timeout_ms: 60_000 },
          (d) => d.response === `MOCK REPLY: task ${i}`,
        ),
      );
      const tm = await time("tmux", () => tmuxFirst(m, dirs.tmux, `tmux ${i}`));
      await time("followTmux", () =>
        okCall(
          m,
          "send_message",
          { session_id: tm, message: `again ${i}`, timeout_ms: 60_000 },
          (d) => d.response === `MOCK REPLY: again ${i}`,
        ),
      );
      await time("followHeadless", () =>
        okCall(
          m,
          "send_message",
          { session_id: task.session_id, message: `again ${i}`, timeout_ms: 60_000 },
          (d) => d.response === `MOCK REPLY: again ${i}`,
        ),
      );
      await time("followTmuxAtStop", () => sendThenWait(m, tm, `once more ${i}`));
      await Promise.all([tm, task.session_id].map((id) => okCall(m, "kill_session", { session_id: id, force: true })));
      await okCall(m, "kill_session", {
        session_id: await time("tmuxPrompt", () => tmuxWithPrompt(m, dirs.tmuxp, `tmuxp ${i}`)),
        force: true,
      });
      await spareReady(mw, dirs.pool);
      const wid = await time("warm", () => tmuxFirst(mw, dirs.pool, `warm ${i}`));
      await okCall(mw, "kill_session", { session_id: wid, force: true });
      await spareReady(mw, dirs.pool);
      const wid2 = await time("warmAtStop", async () => {
        const s = await okCall(mw, "start_session", { cwd: dirs.pool, backend: "tmux", permission_mode: "default" });
        await sendThenWait(mw, s.session_id, `warm at stop ${i}`);
        return s.session_id;
      });
      await okCall(mw, "kill_session", { session_id: wid2, force: true });
      const ids = await time("parTmux", () =>
        Promise.all(Array.from({ length: PAR }, (_, k) => tmuxFirst(m, dirs[`par${k}`], `par ${i}.${k}`))),
      );
      await Promise.all(ids.map((id) => okCall(m, "kill_session", { session_id: id, force: true })));
      await time("parFloor", () =>
        Promise.all(Array.from({ length: PAR }, (_, k) => floor.run(dirs[`parf${k}`], `parf ${i}.${k}`))),
      );
      const qids = await time("parTmuxPrompt", () =>
        Promise.all(Array.from({ length: PAR }, (_, k) => tmuxWithPrompt(m, dirs[`parq${k}`], `parq ${i}.${k}`))),
      );
      await Promise.all(qids.map((id) => okCall(m, "kill_session", { session_id: id, force: true })));
      await time("parBare", () =>
        Promise.all(Array.from({ length: PAR }, (_, k) => claudeP(cli, dirs[`parp${k}`], pEnv, `parp ${i}.${k}`))),
      );
      // The clock stops at tools/list's answer; closing (the server ending) is not what a client pays to start.
      let c;
      await time("spawn", async () => {
        c = await w.connect();
        await c.client.listTools();
      });
      cpu.spawn.push(cpuMs(c.pid));
      await c.close();
      let peer;
      await time("spawnPeer", async () => (peer = await peerList()));
      cpu.spawnPeer.push(peer.cpu);
      await peer.close();
      log?.(
        `first-answer ${i + 1}/${runs}: ${Object.entries(t)
          .map(([k, v]) => `${k} ${round(v.at(-1), 0)}`)
          .join(", ")} ms`,
      );
    }
    const s = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, summary(v)]));
    const ratio = (x, base = s.bare) => `${(x.p50 / base.p50).toFixed(2)}× bare`;
    const row = (key, figure, st, notes, target, met) => ({
      key,
      figure,
      runs: st.n,
      p50: st.p50,
      p95: st.p95,
      p99: st.max,
      notes,
      target,
      result: met === undefined ? "info" : met ? "ok" : "MISS",
      data: { ...st, samples_ms: t[key.replace(/^fa_/, "")].map((x) => round(x)) },
    });
    return [
      row(
        "fa_bare",
        `first answer (CLI ${setup.cli.version} + mock): bare \`claude -p\`, spawn → answer on stdout`,
        s.bare,
        "the yardstick (no hooks)",
        "reported",
      ),
      row(
        "fa_floor",
        "  the interactive floor: the CLI alone in a tmux pane, prompt on argv, Stop hook only (new-session → Stop)",
        s.floor,
        ratio(s.floor),
        "reported",
      ),
      row("fa_task", "  run_task, cold (headless: start + turn)", s.task, ratio(s.task), "≤ 1.0× bare", s.task.p50 <= s.bare.p50),
      row(
        "fa_tmux",
        "  tmux start_session + send_message, cold",
        s.tmux,
        `${ratio(s.tmux)}; ${(s.tmux.p50 / s.floor.p50).toFixed(2)}× the interactive floor`,
        "≤ 1.2× bare",
        s.tmux.p50 <= 1.2 * s.bare.p50,
      ),
      row(
        "fa_tmuxPrompt",
        "  tmux start_session {prompt} + wait_for_completion, cold (the prompt on the CLI's command line)",
        s.tmuxPrompt,
        `${ratio(s.tmuxPrompt)}; ${(s.tmuxPrompt.p50 / s.floor.p50).toFixed(2)}× the interactive floor`,
        "≤ 1.10× the interactive floor",
        s.tmuxPrompt.p50 <= 1.1 * s.floor.p50,
      ),
      row(
        "fa_warm",
        "  tmux start_session + send_message, warm spare (WARM_POOL=1)",
        s.warm,
        ratio(s.warm),
        "≤ 0.6× bare",
        s.warm.p50 <= 0.6 * s.bare.p50,
      ),
      row(
        "fa_warmAtStop",
        "  the same, send {wait_for_response: false} + wait_for_completion (at Stop; usage follows)",
        s.warmAtStop,
        ratio(s.warmAtStop),
        "reported",
      ),
      row(
        "fa_floorFollow",
        "  the floor's follow-up: the floor's pane, a second prompt typed, Enter once shown → its Stop",
        s.floorFollow,
        ratio(s.floorFollow),
        "reported",
      ),
      row(
        "fa_followTmux",
        "  follow-up turn, tmux (send_message → reply)",
        s.followTmux,
        `${ratio(s.followTmux)}; ${(s.followTmux.p50 / s.followHeadless.p50).toFixed(2)}× headless follow-up; ${(s.followTmux.p50 / s.floorFollow.p50).toFixed(2)}× the floor's follow-up`,
        "≤ 1.10× the floor's follow-up",
        s.followTmux.p50 <= 1.1 * s.floorFollow.p50,
      ),
      row(
        "fa_followTmuxAtStop",
        "  follow-up turn, tmux, send {wait_for_response: false} + wait_for_completion (at Stop; usage follows)",
        s.followTmuxAtStop,
        `${ratio(s.followTmuxAtStop)}; ${(s.followTmuxAtStop.p50 / s.followHeadless.p50).toFixed(2)}× headless follow-up`,
        "reported",
      ),
      row(
        "fa_followHeadless",
        "  follow-up turn, headless (send_message → reply)",
        s.followHeadless,
        ratio(s.followHeadless),
        "reported",
      ),
      row(
        "fa_parTmux",
        `  ${PAR} first answers in parallel, tmux (start + send each, until the last reply)`,
        s.parTmux,
        `${ratio(s.parTmux)}; ${(s.parTmux.p50 / s.parBare.p50).toFixed(2)}× ${PAR} parallel claude -p`,
        `≤ 1.3× ${PAR} claude -p`,
        s.parTmux.p50 <= 1.3 * s.parBare.p50,
      ),
      row("fa_parFloor", `  ${PAR} interactive floors at once, until the last Stop`, s.parFloor, ratio(s.parFloor), "reported"),
      row(
        "fa_parTmuxPrompt",
        `  ${PAR} tmux start_session {prompt} + wait_for_completion at once, until the last`,
        s.parTmuxPrompt,
        `${ratio(s.parTmuxPrompt)}; ${(s.parTmuxPrompt.p50 / s.parFloor.p50).toFixed(2)}× ${PAR} floors at once`,
        `≤ 1.10× ${PAR} floors`,
        s.parTmuxPrompt.p50 <= 1.1 * s.parFloor.p50,
      ),
      row(
        "fa_spawn",
        "server spawn → initialize → tools/list (stdio, the state directory kept, as a user's)",
        s.spawn,
        `${(s.spawn.p50 / s.spawnPeer.p50).toFixed(2)}× the one-tool SDK peer; server CPU p50 ${round(summary(cpu.spawn).p50, 0)} ms (peer ${round(summary(cpu.spawnPeer).p50, 0)} ms)`,
        "≤ 250 ms",
        s.spawn.p50 <= 250,
      ),
      row(
        "fa_spawnPeer",
        "  the same, the one-tool SDK peer (scripts/bench/peer-server.mjs)",
        s.spawnPeer,
        "the yardstick of a server's start",
        "reported",
      ),
      row("fa_parBare", `  ${PAR} bare \`claude -p\` at once, until the last answer`, s.parBare, ratio(s.parBare), "reported"),
    ];
  } finally {
    await m?.close();
    await mw?.close();
    floor?.close();
    w.cleanup();
    await setup?.close();
  }
}

/**
 * Fault scenarios with the built server (dist/cli.js) over MCP, real tmux on a private socket and the
 * fake claude (tests/fixtures/bin/claude): the server killed with -9 under a 10-session workload, the tmux
 * server killed under live sessions, claude killed mid-turn. Same result shape as store-scenarios.mjs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { makeWorld } from "../bench/world.mjs";
import { EventTail } from "../../dist/events/eventlog.js";
import { foldAll } from "../../dist/events/reducer.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rand = (a, b) => a + Math.floor(Math.random() * (b - a));
const LIVE = new Set(["starting", "ready", "busy", "idle", "waiting_for_permission"]);

/** The world's cleanup, again a moment later when a process of a session was still writing into its directory. */
async function cleanup(w) {
  for (let i = 0; ; i++) {
    try {
      w.cleanup();
      return;
    } catch (e) {
      if (i >= 5) throw e;
      await sleep(200);
    }
  }
}

async function replay(path) {
  const evs = [];
  const t = new EventTail(
    path,
    (e) => evs.push(...e),
    () => {},
  );
  await t.start();
  t.close();
  return foldAll(evs);
}

async function livePanes(w) {
  const out = await w.tmux(["list-panes", "-a", "-F", "#{session_name} #{pane_dead}"]).catch(() => "");
  return out
    .split("\n")
    .filter((l) => l.startsWith("cs-") && l.endsWith(" 0"))
    .map((l) => l.slice(3, l.indexOf(" ")));
}

/** kill -9 of the server at a random point of a 10-session workload; the next server adopts everything. */
export async function kill9Server(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  for (let i = 0; i < runs; i++) {
    const w = makeWorld("faults-k9");
    const fail = (m) => {
      out.failures++;
      out.notes.push(`run ${i}: ${m}`);
    };
    try {
      const a = await w.connect();
      const acked = new Set();
      const work = Array.from({ length: 10 }, async (_, k) => {
        await sleep(k * 40);
        const r = await a
          .call("start_session", { cwd: w.dir("s"), prompt: `FAKE_SLOW:${rand(50, 2500)} task ${k}` })
          .catch(() => undefined);
        if (!r?.ok) return;
        acked.add(r.data.session_id);
        await a
          .call("send_message", {
            session_id: r.data.session_id,
            message: `FAKE_SLOW:${rand(50, 1500)} more ${k}`,
            queue: true,
            wait_for_response: false,
          })
          .catch(() => {});
      });
      await Promise.race([Promise.all(work), sleep(rand(300, 5000))]);
      process.kill(a.pid, "SIGKILL");
      await a.close();
      const state = readFileSync(join(w.stateDir, "state.json"), "utf8");
      try {
        JSON.parse(state);
      } catch (e) {
        fail(`state.json does not parse after kill -9: ${e}`);
      }
      const t0 = performance.now();
      const b = await w.connect();
      const first = await b.must("list_sessions", { status_filter: "all" });
      const recovery = performance.now() - t0;
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, recovery);
      if (process.env.FAULTS_VERBOSE)
        process.stderr.write(
          `  run ${i}: recovered in ${Math.round(recovery)} ms (${first.sessions.length} sessions: ${[...new Set(first.sessions.map((x) => x.status))].join(", ")})\n`,
        );
      const seen = new Map(first.sessions.map((s) => [s.session_id, s.status]));
      for (const id of acked) if (!seen.has(id)) fail(`session ${id} was started (acknowledged) and is lost`);
      for (const id of await livePanes(w)) {
        if (!seen.has(id)) fail(`live tmux session cs-${id} has no record`);
        else if (!LIVE.has(seen.get(id))) fail(`live tmux session cs-${id} is reported ${seen.get(id)}`);
      }
      // Let the turns end, then every status must be exactly what its events log says. A prompt queued behind a turn
      // starts right after that turn ends, so a list and a replay taken a moment apart may see two moments: a mismatch
      // counts only when it persists (the same session, still different, over 5 s of looks).
      await Promise.all(
        [...seen.keys()].map((id) => b.call("wait_for_completion", { session_id: id, timeout_ms: 15_000 }).catch(() => {})),
      );
      let mismatches = [];
      for (let look = 0; look < 11; look++) {
        if (look) await sleep(500);
        const settled = await b.must("list_sessions", { status_filter: "all" });
        mismatches = [];
        for (const s of settled.sessions) {
          const f = await replay(w.eventsPath(s.session_id));
          const want = s.status === "zombie" ? "dead" : s.status;
          if (f.status !== want && !(f.status === "starting" && want === "error"))
            mismatches.push(`${s.session_id}: reported ${s.status}, its log says ${f.status}`);
        }
        if (!mismatches.length) break;
      }
      for (const m of mismatches) fail(m);
      await b.close();
    } catch (e) {
      // The server's last words, when it was the one that went away.
      const logs = readdirSync(w.root)
        .filter((n) => /^server-\d+\.log$/.test(n))
        .sort();
      const last = logs.length ? readFileSync(join(w.root, logs[logs.length - 1]), "utf8") : "";
      const tail = last.trim().split("\n").slice(-6).join(" | ");
      fail(`${String(e).slice(0, 300)}${tail ? ` — server stderr: ${tail.slice(-900)}` : ""}`);
    } finally {
      await cleanup(w);
    }
  }
  return out;
}

/**
 * The tmux server killed under live sessions: the server survives, reports them dead, and resumes one.
 * The resume needs spawn generations from the orchestrator (the old launcher's late exit otherwise marks
 * the new process dead: /work/notes/faults-orchestrator.md, fault 3); `resume: false` leaves that part out.
 */
export async function tmuxKilled(runs, opts = { resume: true }) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  for (let i = 0; i < runs; i++) {
    const w = makeWorld("faults-tmux");
    const fail = (m) => {
      out.failures++;
      out.notes.push(`run ${i}: ${m}`);
    };
    try {
      const m = await w.connect();
      const ids = [];
      // One finished turn each: a conversation with no turn has nothing for --resume to find.
      for (let k = 0; k < 3; k++) ids.push((await m.must("start_session", { cwd: w.dir("s"), prompt: `hello ${k}` })).session_id);
      for (const id of ids) await m.must("wait_for_completion", { session_id: id, timeout_ms: 15_000 });
      await m.call("send_message", { session_id: ids[0], message: "FAKE_SLOW:5000 busy", wait_for_response: false });
      const pid = w.tmuxServerPid();
      process.kill(pid, "SIGKILL");
      const t0 = performance.now();
      let dead = 0;
      while (performance.now() - t0 < 15_000) {
        const l = await m.must("list_sessions", { status_filter: "all" });
        dead = l.sessions.filter((s) => s.status === "dead").length;
        if (dead === 3) break;
        await sleep(100);
      }
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, performance.now() - t0);
      if (dead !== 3) fail(`${dead} of 3 sessions reported dead after the tmux server was killed`);
      const r = opts.resume ? await m.call("resume_session", { session_id: ids[1] }) : { ok: true };
      if (!r.ok) {
        const tail = readFileSync(w.eventsPath(ids[1]), "utf8")
          .split("\n")
          .filter((l) => l.trim())
          .slice(-6);
        fail(
          `resume after the tmux server died: ${r.error?.code} ${r.error?.message.split("\n")[0]}; the log ends ${tail.map((l) => l.slice(0, 90)).join(" | ")}`,
        );
      }
      await m.close();
    } catch (e) {
      fail(String(e).slice(0, 300));
    } finally {
      await cleanup(w);
    }
  }
  return out;
}

function childrenOf(pid) {
  const out = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const st = readFileSync(`/proc/${p}/stat`, "utf8");
      if (Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** claude killed with -9 in the middle of a turn: the waiting call returns with the session dead and its status. */
export async function claudeKilled(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  const w = makeWorld("faults-claude");
  try {
    const m = await w.connect();
    for (let i = 0; i < runs; i++) {
      const fail = (msg) => {
        out.failures++;
        out.notes.push(`run ${i}: ${msg}`);
      };
      const s = await m.must("start_session", { cwd: w.dir("s") });
      const waiting = m.call("send_message", { session_id: s.session_id, message: "FAKE_SLOW:20000 long", timeout_ms: 30_000 });
      await sleep(rand(300, 1000));
      const claude = childrenOf(s.pid); // the launcher's child is claude
      if (claude.length !== 1) {
        fail(`expected one child of the launcher, found ${claude.length}`);
        continue;
      }
      const t0 = performance.now();
      process.kill(claude[0], "SIGKILL");
      const r = await waiting;
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, performance.now() - t0);
      // A turn whose process died is a tool error (SESSION_DEAD) carrying the turn's result.
      const body = r.ok ? undefined : r.error?.details?.result;
      if (r.ok || r.error?.code !== "SESSION_DEAD" || body?.final_state !== "dead")
        fail(
          `send_message ended ${r.ok ? `with final_state ${r.data.final_state}` : `with ${r.error?.code} (${body?.final_state})`}`,
        );
      const l = await m.must("list_sessions", { status_filter: "all" });
      if (l.sessions.find((x) => x.session_id === s.session_id)?.status !== "dead") fail("the session is not reported dead");
    }
    await m.close();
  } catch (e) {
    out.failures++;
    out.notes.push(String(e).slice(0, 300));
  } finally {
    await cleanup(w);
  }
  return out;
}

/**
 * Two or four servers on one state directory sending to the same session at the same moment: every prompt
 * must reach Claude exactly once, none merged with another. Needs the orchestrator to hold the session's
 * send lock around paste + Enter + confirm (/work/notes/faults-orchestrator.md, fault 2).
 */
export async function serversSend(runs, servers = 2) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  const w = makeWorld("faults-send");
  try {
    const ms = [];
    for (let k = 0; k < servers; k++) ms.push(await w.connect());
    const { session_id } = await ms[0].must("start_session", { cwd: w.dir("s") });
    for (let i = 0; i < runs; i++) {
      const msgs = ms.map((_, k) => `run ${i} from server ${k} ${"x".repeat(rand(10, 400))}`);
      await Promise.all(
        ms.map((m, k) => m.call("send_message", { session_id, message: msgs[k], queue: true, wait_for_response: false })),
      );
      const submitted = () =>
        readFileSync(w.eventsPath(session_id), "utf8")
          .split("\n")
          .filter((l) => l.includes('"UserPromptSubmit"'))
          .map((l) => JSON.parse(l).prompt);
      // Queued prompts go one turn after another, each held by its own server: wait until each of this run's prompts
      // is in (bounded), then for the last turn, then a moment more for a duplicate to show.
      for (const until = Date.now() + 30_000; Date.now() < until; await sleep(50))
        if (msgs.every((m) => submitted().some((p) => p.includes(m)))) break;
      await ms[0].call("wait_for_completion", { session_id, timeout_ms: 30_000 });
      await sleep(300);
      const prompts = submitted();
      for (const m of msgs) {
        const n = prompts.filter((p) => p === m).length;
        const merged = prompts.filter((p) => p !== m && p.includes(m)).length;
        if (n !== 1 || merged) {
          out.failures++;
          out.notes.push(`run ${i}: a prompt delivered ${n} time(s), ${merged} time(s) merged into another`);
          break;
        }
      }
    }
    for (const m of ms) await m.close();
  } catch (e) {
    out.failures++;
    out.notes.push(String(e).slice(0, 300));
  } finally {
    await cleanup(w);
  }
  return out;
}

/**
 * The wall clock jumps a day forward and a day back (scripts/faults/clock-shift.mjs, in the server only) while
 * a turn is waited for, while a wait times out, and past MAX_SESSION_DURATION: the wait returns at the turn's
 * end, a time-out comes after its time on the monotonic clock (not at once, not a day late), and no session is
 * ended by its deadline because of a jump. Worst recovery = the latest any wait came back past its due time.
 */
export async function clockJump(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  const DAY = 86_400_000;
  for (let i = 0; i < runs; i++) {
    const box = mkdtempSync(join(tmpdir(), "cs-faults-clock-"));
    const shiftFile = join(box, "shift");
    writeFileSync(shiftFile, "0");
    const w = makeWorld("faults-clock", {
      NODE_OPTIONS: `--import=${pathToFileURL(join(import.meta.dirname, "clock-shift.mjs")).href}`,
      CS_CLOCK_SHIFT_FILE: shiftFile,
      MAX_SESSION_DURATION: "60000",
    });
    const fail = (m) => {
      out.failures++;
      out.notes.push(`run ${i}: ${m}`);
    };
    try {
      const m = await w.connect();
      const shift = (ms) => {
        writeFileSync(shiftFile, String(ms));
        process.kill(m.pid, "SIGUSR2");
      };
      const s = await m.must("start_session", { cwd: w.dir("s") });
      // 1. A turn of 2 s, waited for across a jump forward and a jump back.
      let t0 = performance.now();
      const turn = m.call("send_message", {
        session_id: s.session_id,
        message: "FAKE_SLOW:2000 across the jump",
        timeout_ms: 20_000,
      });
      await sleep(rand(100, 700));
      shift(DAY);
      await sleep(rand(100, 700));
      shift(-DAY);
      const r1 = await turn;
      let waited = performance.now() - t0;
      if (!r1.ok || !r1.data.completed || !String(r1.data.response).includes("across the jump"))
        fail(`the turn across the jumps did not complete: ${JSON.stringify(r1.data ?? r1.text).slice(0, 200)}`);
      if (waited < 1900) fail(`the wait returned early (${Math.round(waited)} ms for a 2 s turn)`);
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, waited - 2000);
      // 2. A wait that times out (1.5 s) while the clock is a day ahead: it ends after 1.5 s, not at once, not a day late.
      shift(DAY);
      t0 = performance.now();
      const r2 = await m.call("send_message", {
        session_id: s.session_id,
        message: "FAKE_SLOW:4000 longer than the wait",
        timeout_ms: 1500,
      });
      waited = performance.now() - t0;
      if (r2.ok && r2.data.completed) fail("a 4 s turn was reported complete by a 1.5 s wait");
      if (waited < 1400) fail(`the 1.5 s wait ended after ${Math.round(waited)} ms`);
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, waited - 1500);
      shift(-DAY);
      const r3 = await m.call("wait_for_completion", { session_id: s.session_id, timeout_ms: 15_000 });
      if (!r3.ok || !r3.data.completed)
        fail(`the turn did not end after the clock went back: ${JSON.stringify(r3.data ?? r3.text).slice(0, 200)}`);
      // 3. Two days ahead, past MAX_SESSION_DURATION (60 s) on the wall clock: the session lives on.
      shift(2 * DAY);
      await sleep(1500);
      const l = await m.must("list_sessions", { status_filter: "all" });
      const st = l.sessions.find((x) => x.session_id === s.session_id)?.status;
      if (!LIVE.has(st)) fail(`the session was ended after a jump past its deadline (status ${st})`);
      shift(0);
      const r4 = await m.call("send_message", { session_id: s.session_id, message: "after the jumps", timeout_ms: 10_000 });
      if (!r4.ok || r4.data.response !== "FAKE REPLY: after the jumps")
        fail(`a turn after the jumps failed: ${JSON.stringify(r4.data ?? r4.text).slice(0, 200)}`);
      await m.close();
    } catch (e) {
      fail(String(e).slice(0, 300));
    } finally {
      await cleanup(w);
      rmSync(box, { recursive: true, force: true });
    }
  }
  return out;
}

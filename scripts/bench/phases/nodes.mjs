/**
 * nodes (issue #22): a coordinator with two test hosts (network namespaces running sshd, reached with real ssh;
 * tests/helpers/test-hosts.mjs) and its own machine, `nodesSessions` sessions on each.
 *
 * - Stop → wait_for_completion: a turn (FAKE_SLOW) is started and wait_for_completion called on it; the clock starts
 *   when the session's Stop line appears in its events.jsonl (fs.watch — the hosts share this machine's file system,
 *   so a far node's log is watched the same way) and stops when the coordinator's answer arrives. Local and far
 *   sessions in the same rounds; target: far p50 ≤ local p50 + 10 ms.
 * - list_sessions over the three machines (every session of every node in one answer); target p50 ≤ 50 ms.
 * - outage detection: a wait in flight on a far session, the host's link cut (ip link set … down); the time until the
 *   wait returns NODE_UNREACHABLE (target ≤ 5 s), and after the link is back, until the node is reachable again.
 * - the coordinator's RSS (VmRSS) at the end.
 * Needs root (namespaces); without it the phase reports SKIP with the reason.
 */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { makeTestHosts, testHostsMissing, writeNodesFile } from "../../../tests/helpers/test-hosts.mjs";
import { EventWatcher } from "../events.mjs";
import { round, summary } from "../stats.mjs";
import { makeWorld, SUT } from "../world.mjs";
import { join } from "node:path";

function rssMiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? round(Number(m[1]) / 1024, 1) : undefined;
}

export async function nodes(cfg, log) {
  const missing = testHostsMissing();
  if (missing) return [{ key: "nodes", figure: "nodes: (skipped)", notes: missing, result: "SKIP" }];
  const n = cfg.nodesSessions;
  const hosts = makeTestHosts(2, {
    tag: `b${process.pid % 1000}`,
    root: SUT.root,
    env: { MAX_CONCURRENT_SESSIONS: String(n + 5), CLAUDE_SESSIONS_LOG_LEVEL: "info" },
  });
  const w = makeWorld("nodes", { MAX_CONCURRENT_SESSIONS: String(n + 5) });
  let m;
  const watchers = [];
  try {
    const [h1, h2] = hosts.hosts;
    w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, {
      h1: { exec: h1.exec, attach: h1.attach },
      h2: { exec: h2.exec, attach: h2.attach },
    });
    m = await w.connect();
    await m.must("list_sessions", {});
    const sessions = [];
    for (const [node, cwd, state] of [
      ["local", w.dir("local"), w.stateDir],
      ["h1", h1.work, h1.stateDir],
      ["h2", h2.work, h2.stateDir],
    ]) {
      for (let i = 0; i < n; i++) {
        const s = await m.must("start_session", { cwd, ...(node === "local" ? {} : { node }) });
        const ew = new EventWatcher(join(state, s.session_id, "events.jsonl"));
        await ew.start();
        watchers.push(ew);
        sessions.push({ id: s.session_id, node, ew });
      }
    }
    log(`nodes: ${sessions.length} sessions on 3 machines`);

    // Stop → wait_for_completion, every session each round (one at a time: the figure is latency, not load).
    const lat = { local: [], far: [] };
    for (let r = 0; r < cfg.nodesRounds; r++) {
      for (const s of sessions) {
        const mark = s.ew.count;
        await m.must("send_message", { session_id: s.id, message: `FAKE_SLOW:150 round ${r}`, wait_for_response: false });
        const stop = s.ew.waitFor((e) => e.hook_event_name === "Stop", { from: mark, timeoutMs: 20_000 });
        const res = await m.call("wait_for_completion", { session_id: s.id, timeout_ms: 20_000 });
        const tRet = performance.now();
        const st = await stop;
        if (!res.ok || !res.data.completed || !st)
          throw new Error(`round ${r}: ${s.node} session ${s.id} did not complete: ${JSON.stringify(res.error ?? res.data)}`);
        (s.node === "local" ? lat.local : lat.far).push(tRet - st.t);
      }
    }
    const sl = summary(lat.local);
    const sf = summary(lat.far);

    const listed = [];
    for (let i = 0; i < cfg.nodesListCalls; i++) {
      const t0 = performance.now();
      const l = await m.must("list_sessions", {});
      listed.push(performance.now() - t0);
      if (l.sessions.length !== 3 * n) throw new Error(`list_sessions returned ${l.sessions.length} sessions, expected ${3 * n}`);
    }
    const sls = summary(listed);

    // Outage: a wait in flight on h1, its link cut.
    const detect = [];
    const back = [];
    const far = sessions.find((s) => s.node === "h1");
    for (let r = 0; r < cfg.nodesOutages; r++) {
      await m.must("send_message", {
        session_id: far.id,
        message: "FAKE_SLOW:60000 through the outage",
        wait_for_response: false,
      });
      const waiting = m.call("wait_for_completion", { session_id: far.id, timeout_ms: 120_000 });
      await sleep(300);
      const t0 = performance.now();
      h1.cut();
      const res = await waiting;
      detect.push(performance.now() - t0);
      if (res.ok || res.error?.code !== "NODE_UNREACHABLE")
        throw new Error(`the wait returned ${JSON.stringify(res.error ?? res.data)} instead of NODE_UNREACHABLE`);
      await sleep(1000);
      h1.restore();
      const t1 = performance.now();
      for (;;) {
        const l = await m.must("list_sessions", { node_filter: "h1" });
        if (l.nodes[0]?.status === "reachable") break;
        if (performance.now() - t1 > 60_000) throw new Error("h1 did not come back within 60 s");
        await sleep(50);
      }
      back.push(performance.now() - t1);
      await m.must("interrupt_session", { session_id: far.id });
    }
    const sd = summary(detect);
    const sb = summary(back);
    const rss = m.pid ? rssMiB(m.pid) : undefined;
    log(`nodes: coordinator RSS ${rss} MiB`);
    return [
      {
        key: "nodes_stop_wait",
        figure: `nodes: Stop → wait_for_completion, far node vs local (${n} sessions each on 2 hosts + local)`,
        runs: sf.n,
        ...sf,
        notes: `local p50 ${sl.p50} ms, p95 ${sl.p95} ms (${sl.n} runs); far − local p50 ${round(sf.p50 - sl.p50)} ms`,
        target: "far p50 ≤ local p50 + 10 ms",
        result: sf.p50 <= sl.p50 + 10 ? "PASS" : "MISS",
        data: { local_ms: sl, far_ms: sf },
      },
      {
        key: "nodes_list",
        figure: `nodes: list_sessions over 3 machines (${3 * n} sessions)`,
        runs: sls.n,
        ...sls,
        target: "p50 ≤ 50 ms",
        result: sls.p50 <= 50 ? "PASS" : "MISS",
        data: { list_ms: sls },
      },
      {
        key: "nodes_outage",
        figure: "nodes: link cut → the wait in flight returns NODE_UNREACHABLE",
        runs: sd.n,
        ...sd,
        notes: `link back → node reachable p50 ${round(sb.p50 ?? NaN)} ms (max ${round(sb.max ?? NaN)} ms); heartbeat 1 s, ping time-out 3 s`,
        target: "≤ 5 s",
        result: (sd.max ?? Infinity) <= 5000 ? "PASS" : "MISS",
        data: { detect_ms: sd, reconnect_ms: sb },
      },
      {
        key: "nodes_rss",
        figure: `nodes: coordinator RSS with 2 nodes and ${3 * n} sessions`,
        notes: `${rss} MiB (VmRSS)`,
        target: "reported",
        result: "INFO",
        data: { rss_mib: rss },
      },
    ];
  } finally {
    for (const ew of watchers) ew.close();
    await m?.close();
    w.cleanup();
    hosts.destroy();
  }
}

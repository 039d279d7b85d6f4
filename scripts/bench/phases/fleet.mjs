/**
 * fleet (issue 36): one coordinator and `fleetHosts` test hosts (network namespaces running sshd, reached with real
 * ssh; tests/helpers/test-hosts.mjs) with `fleetSessions` fake-CLI sessions each, plus a few on the coordinator's own
 * machine. A team of up to 50 members is spread over every node.
 *
 * - the coordinator's RSS and CPU at rest (every session idle, links up) and under load (the listing and broadcast
 *   loops below); CPU is utime + stime from /proc over the wall time.
 * - list_sessions over every machine (every row in one answer): p50/p95; target p50 ≤ 100 ms.
 * - Stop → wait_for_completion on the last node vs this machine (the clock starts at the Stop line in the session's
 *   events.jsonl, watched with fs.watch); target far p50 ≤ local p50 + 10 ms.
 * - broadcast_message to the team (every member answers): the whole round's time, and the notices about the team's
 *   turns that reached the client.
 * - one node cut in the middle (ip link set … down): the time until the listing marks it, the listing meanwhile (its
 *   sessions kept with node_status "unreachable", every other row as before), a session on another node answering,
 *   and the time until the node is reachable again once restored.
 * Throws (the bench's ERROR, the test's failure) when a row is missing, a member does not answer, the cut node's
 * sessions are not marked or another node's session does not answer. Needs root; without it the phase says SKIP.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { makeTestHosts, testHostsMissing, writeNodesFile } from "../../../tests/helpers/test-hosts.mjs";
import { EventWatcher } from "../events.mjs";
import { round, summary } from "../stats.mjs";
import { makeWorld, SUT } from "../world.mjs";

const TICK = 100; // clock ticks a second (USER_HZ on Linux)

function rssMiB(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? round(Number(m[1]) / 1024, 1) : undefined;
}

/** The process's CPU time so far, in ms. */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8")
    .slice(readFileSync(`/proc/${pid}/stat`, "utf8").lastIndexOf(")") + 2)
    .split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
}

/** CPU % of `pid` while `fn` runs. */
async function cpuDuring(pid, fn) {
  const c0 = cpuMs(pid);
  const t0 = performance.now();
  const out = await fn();
  return { pct: round((100 * (cpuMs(pid) - c0)) / (performance.now() - t0), 2), out };
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool(items, n, fn) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (queue.length) await fn(queue.shift());
    }),
  );
}

export async function fleet(cfg, log) {
  const missing = testHostsMissing();
  if (missing) return [{ key: "fleet", figure: "fleet: (skipped)", notes: missing, result: "SKIP" }];
  // CS_BENCH_FLEET=<hosts>x<sessions>: another size (each fake CLI is a Node process of ~70 MB: 10 × 50 needs ~35 GB).
  const size = /^(\d{1,2})x(\d{1,3})$/.exec(process.env.CS_BENCH_FLEET ?? "");
  const H = size ? Number(size[1]) : cfg.fleetHosts;
  const S = size ? Number(size[2]) : cfg.fleetSessions;
  const LOCAL = cfg.fleetLocal ?? 3;
  const teamSize = Math.min(50, H * S);
  const hosts = makeTestHosts(H, {
    tag: `f${process.pid % 1000}`,
    root: SUT.root,
    env: { MAX_CONCURRENT_SESSIONS: String(S + 5), CLAUDE_SESSIONS_LOG_LEVEL: "warn" },
  });
  const w = makeWorld("fleet", { MAX_CONCURRENT_SESSIONS: String(LOCAL + 5), CLAUDE_SESSIONS_LOG_LEVEL: "warn" });
  let m;
  const watchers = [];
  try {
    const hs = hosts.hosts;
    w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(
      w.root,
      Object.fromEntries(hs.map((h) => [h.name, { exec: h.exec, attach: h.attach }])),
    );
    m = await w.connect();
    const notices = [];
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notices.push({ t: performance.now(), data: n.params.data }),
    );
    await m.must("list_sessions", {});
    // Sessions: S on each host (a share of them in the team), LOCAL here; the hosts are filled in parallel.
    const sessions = [];
    const perHostTeam = Math.ceil(teamSize / H);
    let members = 0;
    const t0 = performance.now();
    const plan = hs.flatMap((h) => Array.from({ length: S }, (_, i) => ({ h, i })));
    const byHost = new Map(hs.map((h) => [h.name, plan.filter((p) => p.h === h)]));
    await pool([...byHost.values()], Math.min(H, cfg.fleetStartParallel ?? 4), async (items) => {
      for (const { h, i } of items) {
        const team =
          i < perHostTeam && members < teamSize ? (members++, { team_name: "fleet", teammate_name: `${h.name}-m${i}` }) : {};
        const s = await m.must("start_session", { cwd: h.work, node: h.name, ...team }, { timeout: 120_000 });
        sessions.push({ id: s.session_id, node: h.name, state: h.stateDir, team: !!team.team_name });
      }
    });
    for (let i = 0; i < LOCAL; i++) {
      const s = await m.must("start_session", { cwd: w.dir("local") });
      sessions.push({ id: s.session_id, node: "local", state: w.stateDir, team: false });
    }
    const total = H * S + LOCAL;
    log(`fleet: ${total} sessions on ${H} hosts + this machine started in ${round((performance.now() - t0) / 1000, 1)} s`);

    // At rest.
    await sleep(2000);
    const rest = await cpuDuring(m.pid, () => sleep(cfg.fleetRestSeconds * 1000));
    const rssRest = rssMiB(m.pid);
    log(`fleet: at rest ${rest.pct} % CPU, ${rssRest} MiB`);

    // Listing.
    const listed = [];
    const listing = await cpuDuring(m.pid, async () => {
      for (let i = 0; i < cfg.fleetListCalls; i++) {
        const t = performance.now();
        const l = await m.must("list_sessions", {});
        listed.push(performance.now() - t);
        if (l.sessions.length !== total)
          throw new Error(`list_sessions returned ${l.sessions.length} sessions, expected ${total}`);
      }
    });
    const sls = summary(listed);

    // Stop → wait_for_completion, the last node vs here.
    const last = hs[hs.length - 1].name;
    const lat = { local: [], far: [] };
    for (const kind of ["local", "far"]) {
      const pick = sessions.filter((s) => (kind === "local" ? s.node === "local" : s.node === last && !s.team)).slice(0, 3);
      for (const s of pick) {
        const ew = new EventWatcher(join(s.state, s.id, "events.jsonl"));
        await ew.start();
        watchers.push(ew);
        s.ew = ew;
      }
      for (let r = 0; r < cfg.fleetStopRounds; r++) {
        const s = pick[r % pick.length];
        const mark = s.ew.count;
        await m.must("send_message", { session_id: s.id, message: `FAKE_SLOW:150 round ${r}`, wait_for_response: false });
        const stop = s.ew.waitFor((e) => e.hook_event_name === "Stop", { from: mark, timeoutMs: 30_000 });
        const res = await m.call("wait_for_completion", { session_id: s.id, timeout_ms: 30_000 });
        const tRet = performance.now();
        const st = await stop;
        if (!res.ok || !res.data.completed || !st)
          throw new Error(`${s.node} session ${s.id} did not complete: ${JSON.stringify(res.error ?? res.data)}`);
        lat[kind].push(tRet - st.t);
      }
    }
    const sl = summary(lat.local);
    const sf = summary(lat.far);

    // Broadcast to the team, every member answering; the notices of its turns that reached the client.
    const rounds = [];
    let reached = 0;
    const teamIds = new Set(sessions.filter((s) => s.team).map((s) => s.id));
    const bcast = await cpuDuring(m.pid, async () => {
      for (let r = 0; r < cfg.fleetBroadcastRounds; r++) {
        const from = notices.length;
        const t = performance.now();
        const b = await m.must(
          "broadcast_message",
          { team_name: "fleet", message: `all hands ${r}`, timeout_ms: 60_000 },
          { timeout: 120_000 },
        );
        rounds.push(performance.now() - t);
        const answered = b.results.filter((x) => x.message_sent && x.response === `FAKE REPLY: all hands ${r}`).length;
        if (answered !== teamSize)
          throw new Error(
            `broadcast round ${r}: ${answered} of ${teamSize} members answered: ${JSON.stringify(b.results.find((x) => !x.message_sent || !x.response))}`,
          );
        // A member's notice is relayed by its node and then the coordinator: it may land just after the answer.
        const got = () =>
          new Set(
            notices
              .slice(from)
              .filter((n) => teamIds.has(n.data?.session_id) && n.data?.event === "turn_ended")
              .map((n) => n.data.session_id),
          ).size;
        const tw = performance.now();
        while (got() < teamSize && performance.now() - tw < 5000) await sleep(50);
        reached += got();
      }
    });
    const sb = summary(rounds);
    const rssLoad = rssMiB(m.pid);

    // One node cut in the middle, then restored.
    const mid = hs[Math.floor(H / 2)];
    const other = sessions.find((s) => s.node !== mid.name && s.node !== "local" && !s.team);
    const tc = performance.now();
    mid.cut();
    let l;
    for (;;) {
      l = await m.must("list_sessions", {});
      if (l.nodes.find((n) => n.name === mid.name)?.status !== "reachable") break;
      if (performance.now() - tc > 30_000) throw new Error(`${mid.name} was not marked within 30 s of its cut`);
      await sleep(100);
    }
    const marked = performance.now() - tc;
    const midRows = l.sessions.filter((r) => r.node === mid.name);
    if (midRows.length !== S || midRows.some((r) => r.node_status !== "unreachable"))
      throw new Error(`the cut node's ${S} sessions are not all listed as unreachable: ${midRows.length} rows`);
    if (l.sessions.length !== total || l.sessions.some((r) => r.node !== mid.name && r.node_status))
      throw new Error("the other nodes' rows changed while one node was cut");
    const ta = performance.now();
    const ans = await m.must("send_message", { session_id: other.id, message: "during the cut" });
    const otherMs = performance.now() - ta;
    if (ans.response !== "FAKE REPLY: during the cut")
      throw new Error(`a session on ${other.node} did not answer during the cut`);
    mid.restore();
    const tr = performance.now();
    for (;;) {
      const back = await m.must("list_sessions", { node_filter: mid.name });
      if (back.nodes[0]?.status === "reachable" && back.sessions.length === S) break;
      if (performance.now() - tr > 60_000) throw new Error(`${mid.name} did not come back within 60 s`);
      await sleep(100);
    }
    const restored = performance.now() - tr;
    log(`fleet: ${mid.name} cut → marked in ${round(marked)} ms, back ${round(restored)} ms after its link returned`);

    return [
      {
        key: "fleet_list",
        figure: `fleet: list_sessions over ${H} nodes + this machine (${total} sessions)`,
        runs: sls.n,
        ...sls,
        notes: `coordinator CPU while listing ${listing.pct} %`,
        target: "p50 ≤ 100 ms",
        result: sls.p50 <= 100 ? "PASS" : "MISS",
        data: { list_ms: sls, cpu_pct: listing.pct },
      },
      {
        key: "fleet_stop_wait",
        figure: `fleet: Stop → wait_for_completion, last node (${last}) vs this machine`,
        runs: sf.n,
        ...sf,
        notes: `local p50 ${sl.p50} ms, p95 ${sl.p95} ms (${sl.n} runs); far − local p50 ${round(sf.p50 - sl.p50)} ms`,
        target: "far p50 ≤ local p50 + 10 ms",
        result: sf.p50 <= sl.p50 + 10 ? "PASS" : "MISS",
        data: { local_ms: sl, far_ms: sf },
      },
      {
        key: "fleet_broadcast",
        figure: `fleet: broadcast_message to a ${teamSize}-member team on ${H} nodes, every member answering`,
        runs: sb.n,
        ...sb,
        notes: `turn_ended notices of members reaching the client (within 5 s of the answer): ${reached} of ${teamSize * rounds.length}; coordinator CPU ${bcast.pct} %`,
        target: "reported",
        result: "INFO",
        data: { broadcast_ms: sb, notices_reached: reached, notices_expected: teamSize * rounds.length, cpu_pct: bcast.pct },
      },
      {
        key: "fleet_cut",
        figure: `fleet: one node of ${H} cut and restored`,
        notes: `marked in ${round(marked)} ms (its ${S} sessions listed unreachable, the rest as before); another node's session answered in ${round(otherMs)} ms meanwhile; reachable again ${round(restored)} ms after its link returned`,
        target: "marked ≤ 5 s, back ≤ 5 s",
        result: marked <= 5000 && restored <= 5000 ? "PASS" : "MISS",
        data: { marked_ms: marked, other_ms: otherMs, restored_ms: restored },
      },
      {
        key: "fleet_coordinator",
        figure: `fleet: the coordinator at rest and under load (${total} sessions)`,
        notes: `at rest ${rest.pct} % CPU over ${cfg.fleetRestSeconds} s, ${rssRest} MiB; after the load ${rssLoad} MiB (VmRSS)`,
        target: "≤ 300 MiB, idle CPU ≤ 1 %",
        result: (rssLoad ?? Infinity) <= 300 && rest.pct <= 1 ? "PASS" : "MISS",
        data: { rest_cpu_pct: rest.pct, rss_rest_mib: rssRest, rss_load_mib: rssLoad },
      },
    ];
  } finally {
    for (const ew of watchers) ew.close();
    await m?.close();
    w.cleanup();
    hosts.destroy();
  }
}

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
 *
 * CS_BENCH_FLEET_LIVE=<n> (or cfg.fleetLive): only n sessions of each host stay live, the others are hibernated as
 * soon as they are started (kill_session {hibernate: true}), for a machine where all of them would not fit (500 live
 * fake CLIs took ~8.5 GiB here). Team members and the Stop → wait picks stay live (the team is capped at hosts × n); every figure
 * says how many sessions are live and how many hibernated, and every listing must hold all of them, the hibernated ones
 * listed `hibernated` (the phase throws otherwise).
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

/** The machine's MemAvailable, in MiB. */
function memAvailableMiB() {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : undefined;
}

/** CS_BENCH_FLEET_LIVE, else cfg.fleetLive, else every session live; at most `S`. */
function liveLimit(cfg, S) {
  const env = process.env.CS_BENCH_FLEET_LIVE;
  if (env !== undefined && env !== "" && !/^[1-9]\d{0,2}$/.test(env))
    throw new Error(`CS_BENCH_FLEET_LIVE=${env}: give the number of live sessions per host (1–999)`);
  return Math.min(S, env ? Number(env) : (cfg.fleetLive ?? S));
}

/**
 * Each host's S sessions in order: team members first (up to `teamSize` over all hosts), then on the last host the 3
 * sessions the Stop → wait figure uses (`pick`); these stay live, then the next ones until the host has `live` live
 * sessions. The others are hibernated once started.
 */
function planHosts(hs, S, teamSize, live) {
  const perHostTeam = Math.ceil(teamSize / hs.length);
  let members = 0;
  return hs.map((h, k) => {
    let picks = 0;
    const items = Array.from({ length: S }, (_, i) => {
      const team = i < perHostTeam && members < teamSize ? (members++, true) : false;
      const pick = !team && k === hs.length - 1 && picks < 3 ? (picks++, true) : false;
      return { h, i, team, pick, live: true };
    });
    let room = live - items.filter((p) => p.team || p.pick).length;
    for (const p of items) p.live = p.team || p.pick || room-- > 0;
    return items;
  });
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
  // CS_BENCH_FLEET=<hosts>x<sessions>: another size (10 × 50, all live, took ~8.5 GiB of the machine here;
  // CS_BENCH_FLEET_LIVE keeps only some of them live).
  const size = /^(\d{1,2})x(\d{1,3})$/.exec(process.env.CS_BENCH_FLEET ?? "");
  const H = size ? Number(size[1]) : cfg.fleetHosts;
  const S = size ? Number(size[2]) : cfg.fleetSessions;
  const LOCAL = cfg.fleetLocal ?? 3;
  const LIVE = liveLimit(cfg, S);
  const teamSize = Math.min(50, H * LIVE);
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
    // Sessions: S on each host (a share of them in the team; past LIVE hibernated once started), LOCAL here; the hosts
    // are filled in parallel.
    const sessions = [];
    const t0 = performance.now();
    await pool(planHosts(hs, S, teamSize, LIVE), Math.min(H, cfg.fleetStartParallel ?? 4), async (items) => {
      for (const { h, i, team, pick, live } of items) {
        const tm = team ? { team_name: "fleet", teammate_name: `${h.name}-m${i}` } : {};
        const s = await m.must("start_session", { cwd: h.work, node: h.name, ...tm }, { timeout: 120_000 });
        if (!live) {
          const k = await m.must("kill_session", { session_id: s.session_id, hibernate: true }, { timeout: 60_000 });
          if (k.status !== "hibernated") throw new Error(`${h.name} session ${s.session_id} was not hibernated: ${k.status}`);
        }
        sessions.push({ id: s.session_id, node: h.name, state: h.stateDir, team, pick, live });
      }
    });
    for (let i = 0; i < LOCAL; i++) {
      const s = await m.must("start_session", { cwd: w.dir("local") });
      sessions.push({ id: s.session_id, node: "local", state: w.stateDir, team: false, pick: false, live: true });
    }
    const total = H * S + LOCAL;
    const hibernated = new Set(sessions.filter((s) => !s.live).map((s) => s.id));
    const nLive = total - hibernated.size;
    const split = `${nLive} live, ${hibernated.size} hibernated`;
    /** Every row there (`rows`), the hibernated ones (of `hib` expected) listed `hibernated`, no other. */
    const check = (l, what, rows = total, hib = hibernated.size) => {
      if (l.sessions.length !== rows)
        throw new Error(`${what}: list_sessions returned ${l.sessions.length} sessions, expected ${rows}`);
      const listed = l.sessions.filter((r) => r.status === "hibernated");
      if (listed.length !== hib || listed.some((r) => !hibernated.has(r.session_id)))
        throw new Error(
          `${what}: ${listed.length} sessions listed hibernated, expected ${hib} (the ones hibernated at the start)`,
        );
    };
    check(await m.must("list_sessions", {}), "after the start");
    const memAvail = memAvailableMiB();
    log(
      `fleet: ${total} sessions (${split}) on ${H} hosts + this machine started in ${round((performance.now() - t0) / 1000, 1)} s; MemAvailable ${memAvail} MiB`,
    );

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
        check(l, `listing ${i}`);
      }
    });
    const sls = summary(listed);

    // Stop → wait_for_completion, the last node vs here.
    const last = hs[hs.length - 1].name;
    const lat = { local: [], far: [] };
    for (const kind of ["local", "far"]) {
      const pick = sessions.filter((s) => (kind === "local" ? s.node === "local" : s.pick)).slice(0, 3);
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
    const others = sessions.filter((s) => s.node !== mid.name && s.node !== "local" && !s.team);
    const other = others.find((s) => s.live) ?? others[0];
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
    check(l, "while a node was cut");
    const ta = performance.now();
    const ans = await m.must("send_message", { session_id: other.id, message: "during the cut" });
    const otherMs = performance.now() - ta;
    if (ans.response !== "FAKE REPLY: during the cut")
      throw new Error(`a session on ${other.node} did not answer during the cut`);
    mid.restore();
    const tr = performance.now();
    const midHib = sessions.filter((s) => s.node === mid.name && !s.live).length;
    for (;;) {
      const back = await m.must("list_sessions", { node_filter: mid.name });
      if (back.nodes[0]?.status === "reachable" && back.sessions.length === S) {
        check(back, `${mid.name} restored`, S, midHib);
        break;
      }
      if (performance.now() - tr > 60_000) throw new Error(`${mid.name} did not come back within 60 s`);
      await sleep(100);
    }
    const restored = performance.now() - tr;
    check(await m.must("list_sessions", {}), "at the end");
    log(`fleet: ${mid.name} cut → marked in ${round(marked)} ms, back ${round(restored)} ms after its link returned`);

    return [
      {
        key: "fleet_list",
        figure: `fleet: list_sessions over ${H} nodes + this machine (${total} sessions: ${split})`,
        runs: sls.n,
        ...sls,
        notes: `coordinator CPU while listing ${listing.pct} %`,
        target: "p50 ≤ 100 ms",
        result: sls.p50 <= 100 ? "PASS" : "MISS",
        data: { list_ms: sls, cpu_pct: listing.pct, live: nLive, hibernated: hibernated.size },
      },
      {
        key: "fleet_stop_wait",
        figure: `fleet: Stop → wait_for_completion, last node (${last}) vs this machine (${total} sessions: ${split})`,
        runs: sf.n,
        ...sf,
        notes: `local p50 ${sl.p50} ms, p95 ${sl.p95} ms (${sl.n} runs); far − local p50 ${round(sf.p50 - sl.p50)} ms`,
        target: "far p50 ≤ local p50 + 10 ms",
        result: sf.p50 <= sl.p50 + 10 ? "PASS" : "MISS",
        data: { local_ms: sl, far_ms: sf, live: nLive, hibernated: hibernated.size },
      },
      {
        key: "fleet_broadcast",
        figure: `fleet: broadcast_message to a ${teamSize}-member team on ${H} nodes, every member answering (${total} sessions: ${split})`,
        runs: sb.n,
        ...sb,
        notes: `turn_ended notices of members reaching the client (within 5 s of the answer): ${reached} of ${teamSize * rounds.length}; coordinator CPU ${bcast.pct} %`,
        target: "reported",
        result: "INFO",
        data: {
          broadcast_ms: sb,
          notices_reached: reached,
          notices_expected: teamSize * rounds.length,
          cpu_pct: bcast.pct,
          live: nLive,
          hibernated: hibernated.size,
        },
      },
      {
        key: "fleet_cut",
        figure: `fleet: one node of ${H} cut and restored (${total} sessions: ${split})`,
        notes: `marked in ${round(marked)} ms (its ${S} sessions listed unreachable, ${midHib} of them hibernated, the rest as before); another node's session answered in ${round(otherMs)} ms meanwhile; reachable again ${round(restored)} ms after its link returned`,
        target: "marked ≤ 5 s, back ≤ 5 s",
        result: marked <= 5000 && restored <= 5000 ? "PASS" : "MISS",
        data: { marked_ms: marked, other_ms: otherMs, restored_ms: restored, live: nLive, hibernated: hibernated.size },
      },
      {
        key: "fleet_coordinator",
        figure: `fleet: the coordinator at rest and under load (${total} sessions: ${split})`,
        notes: `at rest ${rest.pct} % CPU over ${cfg.fleetRestSeconds} s, ${rssRest} MiB; after the load ${rssLoad} MiB (VmRSS); the machine's MemAvailable ${memAvail} MiB once all were started`,
        target: "≤ 300 MiB, idle CPU ≤ 1 %",
        result: (rssLoad ?? Infinity) <= 300 && rest.pct <= 1 ? "PASS" : "MISS",
        data: {
          rest_cpu_pct: rest.pct,
          rss_rest_mib: rssRest,
          rss_load_mib: rssLoad,
          mem_available_mib: memAvail,
          live: nLive,
          hibernated: hibernated.size,
        },
      },
    ];
  } finally {
    for (const ew of watchers) ew.close();
    await m?.close();
    w.cleanup();
    hosts.destroy();
  }
}

/**
 * broadcast: from calling broadcast_message (wait_for_response: false) on a team of N members to the
 * UserPromptSubmit line of the LAST member appearing in its events.jsonl (the bench's fs.watch on each
 * file): the time until every member has the prompt. Also each member's own time (all members, all
 * rounds) and the count of UserPromptSubmit lines per member per round (exactly one, or it is reported).
 * After each round every member's turn is waited for (wait_for_sessions, not timed).
 */
import { EventWatcher } from "../events.mjs";
import { round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

export async function broadcast(cfg) {
  const n = cfg.broadcastMembers;
  const w = makeWorld("broadcast", { MAX_CONCURRENT_SESSIONS: String(n + 5) });
  let m;
  const watchers = [];
  try {
    m = await w.connect();
    const ids = [];
    for (let i = 0; i < n; i++)
      ids.push((await m.must("start_session", { cwd: w.dir("member"), team_name: "bench" })).session_id);
    for (const id of ids) {
      const ew = new EventWatcher(w.eventsPath(id));
      await ew.start();
      watchers.push(ew);
    }
    const all = [];
    const each = [];
    const notOnce = [];
    for (let r = 0; r < cfg.broadcastRounds; r++) {
      const msg = `broadcast round ${r}: review the change`;
      const marks = watchers.map((ew) => ew.count);
      const t0 = performance.now();
      const ups = watchers.map((ew, i) =>
        ew.waitFor((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === msg, { from: marks[i], timeoutMs: 20_000 }),
      );
      const res = await m.call("broadcast_message", { team_name: "bench", message: msg, wait_for_response: false });
      if (!res.ok) throw new Error(`broadcast_message failed: ${res.error?.code}: ${res.error?.message}`);
      const got = await Promise.all(ups);
      if (got.some((g) => !g)) throw new Error(`round ${r}: a member never got the prompt`);
      for (const g of got) each.push(g.t - t0);
      all.push(Math.max(...got.map((g) => g.t)) - t0);
      const done = await m.call("wait_for_sessions", { team_name: "bench", mode: "all", timeout_ms: 30_000 });
      if (!done.ok || !done.data.done) throw new Error(`round ${r}: the members' turns did not end`);
      watchers.forEach((ew, i) => {
        const c = ew.events.slice(marks[i]).filter((e) => e.ev.hook_event_name === "UserPromptSubmit").length;
        if (c !== 1) notOnce.push({ round: r, member: i, count: c });
      });
    }
    const sm = summary(all);
    const se = summary(each);
    return [
      {
        key: "broadcast",
        figure: `broadcast: broadcast_message → every member's UserPromptSubmit (${n} members)`,
        runs: all.length,
        ...sm,
        notes: `per member p50 ${round(se.p50)} ms, p95 ${round(se.p95)} ms; ${notOnce.length} not exactly once`,
        target: "reported; each member exactly once",
        result: notOnce.length ? "MISS" : "PASS",
        data: { all_members_ms: sm, per_member_ms: se, not_once: notOnce, samples_ms: all.map((x) => round(x)) },
      },
    ];
  } finally {
    for (const ew of watchers) ew.close();
    await m?.close();
    w.cleanup();
  }
}

/**
 * list_sessions with 1,000 stored records: state.json is filled before the server starts with
 * 1,000 valid records of ended sessions (status dead, with the fields a real ended session has: a
 * last message of 50–300 characters, a last response of 200–2,000, an error log line for some),
 * then list_sessions {} (all statuses, summaries, no limit) is called sequentially and timed at the
 * MCP client. Three untimed warm-up calls come first. Each reply is checked to carry all 1,000.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { rng, round, summary } from "../stats.mjs";
import { makeWorld, writeState } from "../world.mjs";

const TEXT = "the change is done and the tests pass; I also updated the docs and renamed two helpers for clarity. ";

export function records(n, stateDir) {
  const r = rng(9001);
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  const now = Date.now();
  const sessions = {};
  for (let k = 0; k < n; k++) {
    let id = "";
    for (let i = 0; i < 10; i++) id += alphabet[r.int(0, 35)];
    const cid = randomUUID();
    const created = now - r.int(60_000, 30 * 86_400_000);
    const ended = created + r.int(10_000, 8 * 3_600_000);
    const turns = r.int(0, 60);
    const lastMessage = TEXT.repeat(4).slice(0, r.int(50, 300));
    const lastResponse = TEXT.repeat(25).slice(0, r.int(200, 2000));
    const rec = {
      session_id: id,
      claude_session_id: cid,
      backend: "tmux",
      status: "dead",
      tmux_pane_id: `%${k}`,
      tmux_session: `cs-${id}`,
      tmux_socket: "default",
      created_at: new Date(created).toISOString(),
      started_at: new Date(created + 400).toISOString(),
      last_active: new Date(ended - 1000).toISOString(),
      killed_at: new Date(ended).toISOString(),
      cwd: `/home/dev/projects/project-${k % 40}`,
      command: "/usr/local/bin/claude",
      args: ["--session-id", cid, "--settings", join(stateDir, id, "settings.json")],
      env_names: k % 3 === 0 ? ["ANTHROPIC_API_KEY"] : [],
      turn_count: turns,
      last_message: lastMessage,
      last_response: lastResponse,
      exit_code: k % 5 === 0 ? 143 : 0,
      error_log: k % 4 === 0 ? [`${new Date(ended).toISOString()} ended: user request`] : [],
      messages_sent: turns,
      responses_received: turns,
      total_chars_sent: turns * 180,
      total_chars_received: turns * 1100,
      options: k % 2 === 0 ? { model: "sonnet" } : {},
    };
    if (k % 2 === 0) rec.model = "sonnet";
    if (k % 7 === 0) {
      rec.team_name = `team-${k % 3}`;
      rec.teammate_name = `mate-${k}`;
    }
    sessions[id] = rec;
  }
  return { version: "1.0.0", updated_at: new Date(now).toISOString(), sessions };
}

export async function list(cfg) {
  // debug: the server logs "<tool> ok in N ms" per call, its own share of the round trip.
  // Retention off: the synthetic records are old, and pruning them is not what this phase measures.
  const w = makeWorld("list", { CLAUDE_SESSIONS_LOG_LEVEL: "debug", CLAUDE_SESSIONS_RETAIN_DEAD_MS: "0" });
  let m;
  try {
    const state = records(cfg.listRecords, w.stateDir);
    writeState(w, state);
    const stateBytes = JSON.stringify(state, null, 2).length;
    m = await w.connect();
    for (let i = 0; i < 3; i++) await m.must("list_sessions", {});
    const serverMs = [];
    const off = m.onStderrLine((line) => {
      const x = /list_sessions ok in (\d+) ms/.exec(line);
      if (x) serverMs.push(Number(x[1]));
    });
    const lat = [];
    let replyBytes = 0;
    for (let i = 0; i < cfg.listCalls; i++) {
      const t0 = performance.now();
      const d = await m.must("list_sessions", {});
      lat.push(performance.now() - t0);
      if (d.total_count !== cfg.listRecords || d.sessions.length !== cfg.listRecords)
        throw new Error(`list_sessions returned ${d.sessions.length} of ${d.total_count} (expected ${cfg.listRecords})`);
      replyBytes = JSON.stringify(d).length;
    }
    await new Promise((r) => setTimeout(r, 100)); // the last log lines
    off();
    const sv = summary(serverMs);
    const sm = summary(lat);
    return [
      {
        key: "list",
        figure: `list_sessions with ${cfg.listRecords.toLocaleString("en")} stored records`,
        runs: lat.length,
        ...sm,
        notes: `inside the server's handler p50 ${sv.p50} ms, p99 ${sv.p99} ms (1 ms resolution), the rest is MCP transport; state.json ${(stateBytes / 1024).toFixed(0)} KiB; reply ${(replyBytes / 1024).toFixed(0)} KiB structured + the same again as text`,
        target: "p50 ≤ 25 ms",
        result: sm.p50 <= 25 ? "PASS" : "MISS",
        data: {
          latency_ms: sm,
          server_handler_ms: sv,
          state_json_bytes: stateBytes,
          reply_bytes: replyBytes,
          warmup_calls: 3,
          samples_ms: lat.map((x) => round(x)),
        },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
  }
}

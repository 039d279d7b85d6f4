/**
 * Logs stay bounded (#16, fault 9): a session that prints a lot keeps its raw output under the cap (one archive,
 * output.log.1) and its events log compacted into a snapshot; turns keep ending, stream_output keeps reading,
 * and a restarted server replays the compacted log to the same state.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { can, connect, contractKinds, makeWorld, type Mcp, type World } from "../helpers/harness.js";

const BACKENDS = await contractKinds();
const CAP = 16 * 1024;

describe.each(BACKENDS)("bounded logs (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({
      CLAUDE_SESSIONS_BACKEND: backend,
      CLAUDE_SESSIONS_OUTPUT_LOG_MAX_BYTES: String(CAP),
      CLAUDE_SESSIONS_EVENTS_MAX_BYTES: "8192",
    });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("raw output and events stay under their caps while turns go on ending", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("flood") });
    const dir = join(w.stateDir, s.session_id);
    let cursor: string | undefined;
    for (let i = 0; i < 6; i++) {
      const r = await m.callOk("send_message", {
        session_id: s.session_id,
        message: `FAKE_FLOOD:150 round ${i} ${"y".repeat(1500)}`,
        timeout_ms: 20_000,
      });
      expect(r.completed).toBe(true);
      expect(r.response).toContain(`round ${i}`);
      const log = await m.callOk("stream_output", { session_id: s.session_id, mode: "log", ...(cursor ? { cursor } : {}) });
      cursor = log.cursor;
    }
    // Raw output: rotated (one archive); a file passes the cap by at most what arrives while it is being rotated.
    if (can(backend, "raw_log_rotated")) {
      expect(existsSync(join(dir, "output.log.1"))).toBe(true);
      expect(statSync(join(dir, "output.log")).size).toBeLessThan(2 * CAP);
      expect(statSync(join(dir, "output.log.1")).size).toBeLessThan(2 * CAP);
    }
    // Events: compacted at a quiet moment; the log now starts with the snapshot.
    expect(existsSync(join(dir, "events.jsonl.1"))).toBe(true);
    const first = readFileSync(join(dir, "events.jsonl"), "utf8")
      .split("\n")
      .find((l) => l.trim());
    expect(first).toContain('"cs:snapshot"');
    const list = await m.callOk("list_sessions", {});
    expect(list.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({ turn_count: 6, status: "idle" });

    // A second server replays the compacted log to the same state.
    const m2 = await connect(w);
    const l2 = await m2.callOk("list_sessions", {});
    expect(l2.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({ turn_count: 6 });
    await m2.close();
    const more = await m.callOk("send_message", { session_id: s.session_id, message: "after compaction" });
    expect(more.response).toBe("FAKE REPLY: after compaction");
    await m.callOk("kill_session", { session_id: s.session_id });
  });
});

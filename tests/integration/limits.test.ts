/**
 * Issue #14's time limits with short values, each on its own server over one state directory: the idle TTL ends a
 * session gracefully (waiters get SESSION_DEAD with the reason; resume brings it back), the busy limit interrupts
 * a long turn and flags it (the session stays usable), and retention prunes a dead record with its directory but
 * leaves Claude's transcript, so the conversation can still be adopted.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { connect, makeWorld, processesIn, tmuxOrSkip, until, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();

describe.runIf(HAS_TMUX)("time limits (issue #14)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld({ CLAUDE_SESSIONS_IDLE_TTL_MS: "0", CLAUDE_SESSIONS_BUSY_MAX_MS: "0", CLAUDE_SESSIONS_RETAIN_DEAD_MS: "0" });
  });
  afterAll(() => w?.cleanup());

  it("CLAUDE_SESSIONS_IDLE_TTL_MS ends an idle session gracefully; waiters get SESSION_DEAD with the reason; it resumes", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_IDLE_TTL_MS: "1500" });
    const notes: Array<Record<string, unknown>> = [];
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notes.push(n.params.data as Record<string, unknown>),
    );
    try {
      const cwd = w.dir("idle");
      const { session_id: id } = await m.callOk("start_session", { cwd });
      await m.callOk("send_message", { session_id: id, message: "hello" });
      const t0 = Date.now();
      const r = await until(
        async () =>
          (await m.callOk("list_sessions", { include_metadata: true })).sessions.find(
            (x) => x.session_id === id && x.status === "dead" && x.error_log?.length,
          ),
        10_000,
      );
      expect(Date.now() - t0).toBeGreaterThan(800);
      expect(r.error_log?.join("\n")).toContain("CLAUDE_SESSIONS_IDLE_TTL_MS");
      expect(notes.find((n) => n.event === "limit" && n.session_id === id)?.reason).toMatch(/^idle_ttl/);
      // The server's own end is in the audit log, with the reason as its actor.
      const ended = await until(
        async () => (await readAudit(w.stateDir)).find((l) => l.session_id === id && l.actor === "server:idle_ttl"),
        5000,
      );
      expect(ended).toMatchObject({ tool: "kill_session", outcome: "ok" });
      const waited = await m.call("wait_for_completion", { session_id: id, timeout_ms: 2000 });
      expect(waited.error?.code).toBe("SESSION_DEAD");
      expect(waited.error?.message).toContain("CLAUDE_SESSIONS_IDLE_TTL_MS");
      await until(() => processesIn(cwd).length === 0, 5000);
      const back = await m.callOk("resume_session", { session_id: id });
      expect(back.status).toBe("ready");
      const again = await m.callOk("send_message", { session_id: id, message: "again" });
      expect(again.completed).toBe(true);
    } finally {
      await m.close();
    }
  });

  it("CLAUDE_SESSIONS_BUSY_MAX_MS interrupts a turn busy too long and flags it; the session stays usable", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_BUSY_MAX_MS: "1500" });
    try {
      const { session_id: id } = await m.callOk("start_session", { cwd: w.dir("busy") });
      const t0 = Date.now();
      const r = await m.callOk("send_message", { session_id: id, message: "FAKE_SLOW:20000", timeout_ms: 15_000 });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(r).toMatchObject({ turn_outcome: "interrupted", final_state: "idle" });
      const l = await m.callOk("list_sessions", { include_metadata: true });
      expect(l.sessions.find((x) => x.session_id === id)?.error_log?.join("\n")).toContain("CLAUDE_SESSIONS_BUSY_MAX_MS");
      const interrupted = await until(
        async () => (await readAudit(w.stateDir)).find((x) => x.session_id === id && x.actor === "server:busy_limit"),
        5000,
      );
      expect(interrupted).toMatchObject({ tool: "interrupt_session", outcome: "ok" });
      const again = await m.callOk("send_message", { session_id: id, message: "quick" });
      expect(again).toMatchObject({ completed: true, turn_outcome: "completed" });
      await m.callOk("kill_session", { session_id: id });
    } finally {
      await m.close();
    }
  });

  it("CLAUDE_SESSIONS_RETAIN_DEAD_MS prunes a dead record and its directory, never the transcript; the conversation is adopted again", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_RETAIN_DEAD_MS: "2000" });
    try {
      const cwd = w.dir("retain");
      const s = await m.callOk("start_session", { cwd });
      await m.callOk("send_message", { session_id: s.session_id, message: "remember me" });
      await m.callOk("kill_session", { session_id: s.session_id });
      expect(existsSync(join(w.stateDir, s.session_id))).toBe(true);
      await until(async () => !(await m.callOk("list_sessions", {})).sessions.some((x) => x.session_id === s.session_id), 10_000);
      await until(() => !existsSync(join(w.stateDir, s.session_id)), 5000);
      const pruned = await until(
        async () => (await readAudit(w.stateDir)).find((x) => x.session_id === s.session_id && x.actor === "server:retention"),
        5000,
      );
      expect(pruned).toMatchObject({ tool: "prune_session", outcome: "ok" });
      const projects = join(w.home, ".claude", "projects");
      const transcripts = readdirSync(projects, { recursive: true }).map(String);
      expect(transcripts.some((f) => f.endsWith(`${s.claude_session_id}.jsonl`))).toBe(true);
      // Resumable still: the conversation is adopted from its transcript.
      const back = await m.callOk("resume_session", { claude_session_id: s.claude_session_id, cwd });
      expect(back.status).toBe("ready");
      expect(back.claude_session_id).toBe(s.claude_session_id);
    } finally {
      await m.close();
    }
  });
});

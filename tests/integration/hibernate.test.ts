/**
 * Issue #23, hibernate and wake, with the fake claude on real tmux and pty: a session is hibernated by kill_session
 * {hibernate}, by CLAUDE_SESSIONS_HIBERNATE_AFTER_MS, by CLAUDE_SESSIONS_MAX_LIVE pressure and at server shutdown
 * (pty); send_message, broadcast_message, sync_context and a run_task-kept session wake it; two servers waking one
 * session start one process; a failed wake is WAKE_FAILED and leaves it hibernated; busy and permission-waiting
 * sessions are never hibernated.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { connect, hasPty, makeWorld, processesIn, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();
const HAS_PTY = await hasPty();

type Row = { session_id: string; status: string; claude_session_id: string };

async function statusOf(m: Mcp, id: string): Promise<string | undefined> {
  return (await m.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.status;
}

async function started(m: Mcp, cwd: string, extra: Record<string, unknown> = {}): Promise<Row> {
  const s = await m.callOk("start_session", { cwd, ...extra });
  await m.callOk("send_message", { session_id: s.session_id, message: "first" });
  return s;
}

function git(cwd: string, args: string[]): void {
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, stdio: "ignore" });
}

describe.runIf(HAS_TMUX)("hibernate and wake (issue #23)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld({ CLAUDE_SESSIONS_IDLE_TTL_MS: "0", CLAUDE_SESSIONS_RETAIN_DEAD_MS: "0" });
  });
  afterAll(() => w?.cleanup());

  it("kill_session {hibernate} ends the process and keeps the session; wait, stream and list do not wake it; send_message does", async () => {
    const m = await connect(w);
    try {
      const cwd = w.dir("by-kill");
      const s = await started(m, cwd);
      const k = await m.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      expect(k.status).toBe("hibernated");
      await until(() => processesIn(cwd).length === 0, 5000);
      expect(await statusOf(m, s.session_id)).toBe("hibernated");
      const inactive = await m.callOk("list_sessions", { status_filter: "inactive" });
      expect(inactive.sessions.map((x) => x.session_id)).toContain(s.session_id);
      // Reading it does not wake it.
      const waited = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 2000 });
      expect(waited).toMatchObject({ final_state: "hibernated", completed: true });
      const t = await m.callOk("stream_output", { session_id: s.session_id, mode: "transcript" });
      expect(JSON.stringify(t)).toContain("first");
      expect(processesIn(cwd)).toEqual([]);
      // The next prompt wakes it, in the same conversation, in one call.
      const r = await m.callOk("send_message", { session_id: s.session_id, message: "again" });
      expect(r).toMatchObject({ completed: true, woke: true });
      expect(r.wake_ms).toBeGreaterThan(0);
      const rows = (await m.callOk("list_sessions", {})).sessions;
      expect(rows.find((x) => x.session_id === s.session_id)).toMatchObject({
        status: "idle",
        claude_session_id: s.claude_session_id,
      });
      // A second prompt does not wake anything.
      const r2 = await m.callOk("send_message", { session_id: s.session_id, message: "third" });
      expect(r2.woke).toBeUndefined();
      // A busy session is refused and left running.
      const busy = m.call("send_message", { session_id: s.session_id, message: "FAKE_SLOW:3000", timeout_ms: 10_000 });
      await until(async () => (await statusOf(m, s.session_id)) === "busy", 5000);
      const refused = await m.call("kill_session", { session_id: s.session_id, hibernate: true });
      expect(refused.error?.code).toBe("SESSION_BUSY");
      expect(processesIn(cwd).length).toBeGreaterThan(0);
      await busy;
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  });

  it("CLAUDE_SESSIONS_HIBERNATE_AFTER_MS hibernates an idle session (audited); the next prompt wakes it", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_HIBERNATE_AFTER_MS: "1200" });
    try {
      const cwd = w.dir("by-time");
      const s = await started(m, cwd);
      await until(async () => (await statusOf(m, s.session_id)) === "hibernated", 10_000);
      await until(() => processesIn(cwd).length === 0, 5000);
      const line = await until(
        async () =>
          (await readAudit(w.stateDir)).find((l) => l.session_id === s.session_id && l.actor === "server:hibernate_after"),
        5000,
      );
      expect(line).toMatchObject({ tool: "kill_session", outcome: "ok" });
      const r = await m.callOk("send_message", { session_id: s.session_id, message: "wake up" });
      expect(r).toMatchObject({ completed: true, woke: true, response: expect.stringContaining("wake up") });
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  });

  it("CLAUDE_SESSIONS_MAX_LIVE hibernates the least recently used idle session, never a busy or permission-waiting one", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_MAX_LIVE: "3" });
    try {
      const a = await started(m, w.dir("lru-a"));
      const b = await started(m, w.dir("lru-b"));
      const c = await started(m, w.dir("lru-c"));
      // a, the oldest, is busy and b waits for a permission: c, the only idle one, must go.
      const busy = m.call("send_message", { session_id: a.session_id, message: "FAKE_SLOW:4000", timeout_ms: 15_000 });
      const perm = await m.callOk("send_message", { session_id: b.session_id, message: "FAKE_BASH:true", timeout_ms: 10_000 });
      expect(perm.final_state).toBe("waiting_for_permission");
      await until(async () => (await statusOf(m, a.session_id)) === "busy", 5000);
      const d = await started(m, w.dir("lru-d"));
      expect(await statusOf(m, c.session_id)).toBe("hibernated");
      expect(await statusOf(m, a.session_id)).toBe("busy");
      expect(await statusOf(m, b.session_id)).toBe("waiting_for_permission");
      const line = await until(
        async () => (await readAudit(w.stateDir)).find((l) => l.session_id === c.session_id && l.actor === "server:max_live"),
        5000,
      );
      expect(line).toMatchObject({ outcome: "ok" });
      await busy;
      await m.callOk("respond_permission", { session_id: b.session_id, decision: "allow" });
      await m.callOk("wait_for_completion", { session_id: b.session_id, timeout_ms: 10_000 });
      // Waking c makes room again: d's last turn ended before a's and b's, so d is the least recently used idle one.
      const r = await m.callOk("send_message", { session_id: c.session_id, message: "back" });
      expect(r).toMatchObject({ completed: true, woke: true });
      const live = (await m.callOk("list_sessions", { status_filter: "active" })).sessions;
      expect(live.map((x) => x.session_id).sort()).toEqual([a.session_id, b.session_id, c.session_id].sort());
      expect(await statusOf(m, d.session_id)).toBe("hibernated");
      for (const x of [a, b, c, d]) await m.callOk("kill_session", { session_id: x.session_id });
    } finally {
      await m.close();
    }
  });

  it("under CLAUDE_SESSIONS_MAX_LIVE a warm-pool spare is ended before any conversation hibernates, and no spare is started without free room", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_MAX_LIVE: "2", CLAUDE_SESSIONS_WARM_POOL: "1" });
    try {
      const a = await started(m, w.dir("spare-a"));
      // a's first turn ended: the pool starts a spare like a (2 live: a and the spare).
      const spare = await until(
        async () => (await m.callOk("list_sessions", {})).sessions.find((s) => s.spare && s.status === "ready"),
        20_000,
        100,
      );
      // Another cwd (another pool key): the room comes from the spare, not from a's conversation.
      const b = await started(m, w.dir("spare-b"));
      expect(await statusOf(m, a.session_id)).toBe("idle");
      expect(await statusOf(m, spare.session_id)).toBeUndefined();
      const line = await until(
        async () => (await readAudit(w.stateDir)).find((l) => l.session_id === spare.session_id && l.actor === "server:max_live"),
        5000,
      );
      expect(line).toMatchObject({ tool: "kill_session", outcome: "ok" });
      // b's refill finds no free room (a and b are the 2 live): it says so and starts nothing, so nothing hibernates.
      await until(async () => /warm pool: no spare started: CLAUDE_SESSIONS_MAX_LIVE \(2\)/.test(m.stderr()), 20_000, 100);
      const rows = (await m.callOk("list_sessions", {})).sessions;
      expect(rows.filter((s) => s.spare)).toEqual([]);
      expect(rows.filter((s) => s.status === "hibernated")).toEqual([]);
      for (const x of [a, b]) await m.callOk("kill_session", { session_id: x.session_id });
    } finally {
      await m.close();
    }
  });

  it("broadcast_message, sync_context and a run_task-kept session wake hibernated sessions", async () => {
    const m = await connect(w);
    try {
      const one = await started(m, w.dir("team-1"), { team_name: "sleepers" });
      const two = await started(m, w.dir("team-2"), { team_name: "sleepers" });
      for (const s of [one, two]) await m.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      const b = await m.callOk("broadcast_message", { team_name: "sleepers", message: "all hands" });
      expect(b.sent_count).toBe(2);
      for (const r of b.results) expect(r).toMatchObject({ woke: true, completed: true });

      const repo = w.dir("sync-repo");
      git(repo, ["init", "-q"]);
      writeFileSync(join(repo, "a.txt"), "one\n");
      git(repo, ["add", "."]);
      git(repo, ["commit", "-qm", "one"]);
      const s = await started(m, repo);
      await m.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      writeFileSync(join(repo, "a.txt"), "two\n");
      const sync = await m.callOk("sync_context", { session_id: s.session_id });
      expect(sync).toMatchObject({ sent: true, woke: true });

      const t = await m.callOk("run_task", { cwd: w.dir("task"), prompt: "a task", backend: "tmux", keep_session: true });
      expect(t).toMatchObject({ kept: true, completed: true });
      await m.callOk("kill_session", { session_id: t.session_id, hibernate: true });
      const r = await m.callOk("send_message", { session_id: t.session_id, message: "follow-up" });
      expect(r).toMatchObject({ completed: true, woke: true });
      for (const id of [one.session_id, two.session_id, s.session_id, t.session_id])
        await m.callOk("kill_session", { session_id: id });
    } finally {
      await m.close();
    }
  });

  it("two servers waking one session start one process, and both prompts are delivered once", async () => {
    const m1 = await connect(w);
    const m2 = await connect(w);
    try {
      const cwd = w.dir("two-servers");
      const s = await started(m1, cwd);
      await m1.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      await until(() => processesIn(cwd).length === 0, 5000);
      const [r1, r2] = await Promise.all([
        m1.callOk("send_message", { session_id: s.session_id, message: "from one", queue: true, timeout_ms: 20_000 }),
        m2.callOk("send_message", { session_id: s.session_id, message: "from two", queue: true, timeout_ms: 20_000 }),
      ]);
      expect([r1.woke, r2.woke].filter(Boolean).length).toBe(1);
      const panes = w
        .tmux(["list-panes", "-a", "-F", "#{session_name}"])
        .split("\n")
        .filter((l) => l.includes(s.session_id));
      expect(panes.length).toBe(1);
      await m1.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000, check_idle: true });
      const events = readFileSync(join(w.stateDir, s.session_id, "events.jsonl"), "utf8");
      const prompts = events.split("\n").filter((l) => l.includes('"UserPromptSubmit"'));
      expect(prompts.filter((l) => l.includes("from one")).length).toBe(1);
      expect(prompts.filter((l) => l.includes("from two")).length).toBe(1);
      expect(events.split("\n").filter((l) => l.includes('"cs:spawn"')).length).toBe(2);
      await m1.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m1.close();
      await m2.close();
    }
  });

  it("a prompt that arrives while the session is being hibernated waits, and is delivered once", async () => {
    const m = await connect(w);
    try {
      const s = await started(m, w.dir("meanwhile"));
      const hib = m.call("kill_session", { session_id: s.session_id, hibernate: true });
      // Not a wait for a condition: a short gap so the prompt lands while the hibernation is under way (either order passes).
      await new Promise((r) => setTimeout(r, 30));
      const sent = await m.callOk("send_message", { session_id: s.session_id, message: "in the middle", timeout_ms: 20_000 });
      const h = await hib;
      expect(sent.completed).toBe(true);
      // Whichever went first, the prompt is in the conversation once; when the hibernation went first, it was woken.
      if (h.ok && sent.woke) expect((h.data as { status: string }).status).toBe("hibernated");
      const events = readFileSync(join(w.stateDir, s.session_id, "events.jsonl"), "utf8");
      expect(events.split("\n").filter((l) => l.includes('"UserPromptSubmit"') && l.includes("in the middle")).length).toBe(1);
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  });

  it("a prompt the session would refuse anyway (max_turns used) does not wake it", async () => {
    const m = await connect(w);
    try {
      const cwd = w.dir("no-wake");
      const s = await started(m, cwd, { max_turns: 1 });
      await m.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      const r = await m.call("send_message", { session_id: s.session_id, message: "one more" });
      expect(r.error?.code).toBe("LIMIT_REACHED");
      expect(await statusOf(m, s.session_id)).toBe("hibernated");
      expect(processesIn(cwd)).toEqual([]);
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  });

  it("a fresh session (never prompted) is hibernated by kill_session {hibernate}; the next prompt starts it again with the same id and options", async () => {
    const m = await connect(w);
    try {
      const cwd = w.dir("fresh-kill");
      const s = await m.callOk("start_session", { cwd, model: "sonnet", append_system_prompt: "be brief" });
      expect(s.status).toBe("ready");
      const k = await m.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      expect(k.status).toBe("hibernated");
      await until(() => processesIn(cwd).length === 0, 5000);
      expect(await statusOf(m, s.session_id)).toBe("hibernated");
      const r = await m.callOk("send_message", { session_id: s.session_id, message: "first words", wait_for_usage: true });
      expect(r).toMatchObject({ completed: true, woke: true, response: "FAKE REPLY: first words" });
      // The same session, started again with its options (Claude's argv), its first prompt in a new conversation.
      const argv = processesIn(cwd).map((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0"));
      expect(argv.some((a) => a.includes("--model=sonnet") && a.includes("--append-system-prompt=be brief"))).toBe(true);
      const row = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id);
      expect(row).toMatchObject({ status: "idle", model: "sonnet" });
      const t = await m.callOk("stream_output", { session_id: s.session_id, mode: "transcript" });
      expect(t.items?.map((i) => i.text)).toEqual(["first words", "FAKE REPLY: first words"]);
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  });

  it("fresh sessions do not pin CLAUDE_SESSIONS_MAX_LIVE: the least recently used one is hibernated to make room", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_MAX_LIVE: "2" });
    try {
      const a = await m.callOk("start_session", { cwd: w.dir("fresh-lru-a") });
      const b = await m.callOk("start_session", { cwd: w.dir("fresh-lru-b") });
      const c = await m.callOk("start_session", { cwd: w.dir("fresh-lru-c") });
      expect(await statusOf(m, a.session_id)).toBe("hibernated");
      const live = (await m.callOk("list_sessions", { status_filter: "active" })).sessions.map((x) => x.session_id);
      expect(live.sort()).toEqual([b.session_id, c.session_id].sort());
      const line = await until(
        async () => (await readAudit(w.stateDir)).find((l) => l.session_id === a.session_id && l.actor === "server:max_live"),
        5000,
      );
      expect(line).toMatchObject({ outcome: "ok" });
      for (const x of [a, b, c]) await m.callOk("kill_session", { session_id: x.session_id });
    } finally {
      await m.close();
    }
  });

  it("a wake that fails (the conversation file is gone) is WAKE_FAILED and leaves the session hibernated", async () => {
    const m = await connect(w);
    try {
      const cwd = w.dir("failed-wake");
      const s = await started(m, cwd);
      await m.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      const projects = join(w.home, ".claude", "projects");
      for (const d of readdirSync(projects)) rmSync(join(projects, d, `${s.claude_session_id}.jsonl`), { force: true });
      const r = await m.call("send_message", { session_id: s.session_id, message: "anyone?" });
      expect(r.error?.code).toBe("WAKE_FAILED");
      expect(await statusOf(m, s.session_id)).toBe("hibernated");
      expect(processesIn(cwd)).toEqual([]);
      await m.callOk("kill_session", { session_id: s.session_id });
      expect(await statusOf(m, s.session_id)).toBe("dead");
    } finally {
      await m.close();
    }
  });

  it.runIf(HAS_PTY)("a pty session at server shutdown is hibernated; the next server wakes it on the next prompt", async () => {
    const cwd = w.dir("shutdown-pty");
    const m1 = await connect(w);
    const s = await started(m1, cwd, { backend: "pty" });
    await m1.close();
    await until(() => processesIn(cwd).length === 0, 5000);
    const m2 = await connect(w);
    try {
      expect(await statusOf(m2, s.session_id)).toBe("hibernated");
      const r = await m2.callOk("send_message", { session_id: s.session_id, message: "after restart" });
      expect(r).toMatchObject({ completed: true, woke: true, response: expect.stringContaining("after restart") });
      await m2.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m2.close();
    }
  });
});

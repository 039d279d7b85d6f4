/**
 * Issue #23 with the real CLI on the headless backend (offline, the mock API): a headless session at a clean server
 * shutdown is hibernated and the next server wakes it on the next prompt with the conversation kept; a run_task-kept
 * session hibernated by kill_session {hibernate} is woken by send_message; a tmux session's wake carries the prompt
 * on the resumed CLI's command line (hostile text taken once, as typed).
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();
const H = { backend: "headless", permission_mode: "default" } as const;

describe.runIf(run)("real claude: hibernate and wake", () => {
  let e: E2e;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["shutdown", "task", "tmux"] });
  });
  afterAll(async () => {
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  async function statusOf(m: Mcp, id: string): Promise<unknown> {
    return (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === id)?.status;
  }

  it("a headless session at server shutdown is hibernated; the next server's send_message wakes it in the same conversation", async () => {
    const m1 = await e.connect();
    const s = await m1.callOk("start_session", { cwd: e.dir("shutdown"), ...H });
    await m1.callOk("send_message", { session_id: s.session_id, message: "before the shutdown" });
    await m1.close();
    const m2 = await e.connect();
    try {
      expect(await statusOf(m2, s.session_id)).toBe("hibernated");
      const r = await m2.callOk("send_message", { session_id: s.session_id, message: "after the shutdown", timeout_ms: 30_000 });
      expect(r).toMatchObject({ completed: true, woke: true, response: "MOCK REPLY: after the shutdown" });
      expect(e.userTexts(e.requestsWith("after the shutdown")[0]!)).toContain("before the shutdown");
      await m2.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m2.close();
    }
  });

  it("tmux: a hibernated session is woken with send_message's prompt on the resumed CLI's command line, taken once, history kept", async () => {
    const m = await e.connect();
    try {
      const s = await m.callOk("start_session", {
        cwd: e.dir("tmux"),
        backend: "tmux",
        permission_mode: "default",
        prompt: "the word is heron",
      });
      await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 30_000 });
      expect(await m.callOk("kill_session", { session_id: s.session_id, hibernate: true })).toMatchObject({
        status: "hibernated",
      });
      const prompt = "which word? --help $(touch pwned) #{pane_id}";
      const r = await m.callOk("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 30_000 });
      expect(r).toMatchObject({ completed: true, woke: true, response: `MOCK REPLY: ${prompt}` });
      expect(e.requestsWith(prompt)).toHaveLength(1);
      expect(e.userTexts(e.requestsWith(prompt)[0]!)).toContain("the word is heron");
      expect(readdirSync(e.dir("tmux"))).not.toContain("pwned");
      const again = await m.callOk("send_message", { session_id: s.session_id, message: "and now typed", timeout_ms: 30_000 });
      expect(again).toMatchObject({ completed: true, response: "MOCK REPLY: and now typed" });
      expect(again.woke).toBeUndefined();
      await m.callOk("kill_session", { session_id: s.session_id, force: true });
    } finally {
      await m.close();
    }
  });

  it("a run_task-kept session hibernated by kill_session {hibernate} is woken by send_message", async () => {
    const m = await e.connect();
    try {
      const t = await m.callOk("run_task", {
        cwd: e.dir("task"),
        prompt: "the task",
        keep_session: true,
        permission_mode: "default",
      });
      expect(t.kept).toBe(true);
      expect(await m.callOk("kill_session", { session_id: t.session_id, hibernate: true })).toMatchObject({
        status: "hibernated",
      });
      const r = await m.callOk("send_message", { session_id: t.session_id, message: "the follow-up", timeout_ms: 30_000 });
      expect(r).toMatchObject({ completed: true, woke: true, response: "MOCK REPLY: the follow-up" });
      expect(e.userTexts(e.requestsWith("the follow-up")[0]!)).toContain("the task");
      await m.callOk("kill_session", { session_id: t.session_id });
    } finally {
      await m.close();
    }
  });
});

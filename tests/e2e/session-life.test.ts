/**
 * Issue #24 with the real Claude Code CLI (offline, against the mock API): reset_session (/clear) and
 * compact_session (/compact) typed by the server and confirmed by SessionStart; resume with another model; a fork of
 * a running session as a new session beside its parent. See tests/helpers/real-claude.ts.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: reset, compact, resume with changes, live fork", () => {
  let e: E2e;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["reset", "compact", "model", "fork", "headless"] });
  });
  afterAll(async () => {
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("reset_session clears the conversation in the same session; the record follows the new id; the old one resumes", async () => {
    const m = await e.connect();
    const cwd = e.dir("reset");
    const s = await m.callOk("start_session", { cwd });
    await m.callOk("send_message", { session_id: s.session_id, message: "remember the word heron" });
    const r = await m.call("reset_session", { session_id: s.session_id });
    expect(r.ok, r.text).toBe(true);
    expect(r.data.old_claude_session_id).toBe(s.claude_session_id);
    expect(r.data.claude_session_id).not.toBe(s.claude_session_id);
    expect(r.data.status).toMatch(/^(ready|idle)$/);
    const ev = e.events(s.session_id);
    expect(ev.filter((x) => x.hook_event_name === "SessionStart").map((x) => x.source)).toEqual(["startup", "clear"]);

    // The next turn is a new conversation: the API sees none of the old one, and it lands in the new transcript.
    const after = await m.callOk("send_message", { session_id: s.session_id, message: "fresh start" });
    expect(after.response).toBe("MOCK REPLY: fresh start");
    const [req] = e.requestsWith("fresh start");
    expect(e.userTexts(req!).join("\n")).not.toContain("heron");
    expect(existsSync(e.transcriptFile(cwd, r.data.claude_session_id))).toBe(true);
    const listed = await m.callOk("list_sessions", {});
    expect(listed.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({
      claude_session_id: r.data.claude_session_id,
      status: "idle",
      turn_count: 2,
    });

    // Refused while a turn runs.
    await m.callOk("send_message", { session_id: s.session_id, message: "a slow one MOCK_SLOW:1.5", wait_for_response: false });
    const busy = await m.call("reset_session", { session_id: s.session_id });
    expect(busy.error?.code).toBe("SESSION_BUSY");
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 30_000 });
    await m.callOk("kill_session", { session_id: s.session_id });

    // The old conversation is still there to resume.
    const old = await m.call("resume_session", { claude_session_id: s.claude_session_id, cwd, message: "what was the word?" });
    expect(old.ok, old.text).toBe(true);
    await m.callOk("wait_for_completion", { session_id: old.data.session_id as string, timeout_ms: 30_000 });
    const [q] = e.requestsWith("what was the word?");
    expect(e.userTexts(q!)).toEqual(expect.arrayContaining(["remember the word heron"]));
    await m.callOk("kill_session", { session_id: old.data.session_id as string });
    await m.close();
  });

  it("compact_session runs /compact with instructions; the session goes on in the same conversation", async () => {
    const m = await e.connect();
    const cwd = e.dir("compact");
    const s = await m.callOk("start_session", { cwd });
    await m.callOk("send_message", { session_id: s.session_id, message: "remember the word ibis" });
    const bad = await m.call("compact_session", { session_id: s.session_id, instructions: "keep\u001b[2Jthis" });
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
    const c = await m.call("compact_session", { session_id: s.session_id, instructions: "keep the bird names" });
    expect(c.ok, c.text).toBe(true);
    expect(c.data.status).toMatch(/^(ready|idle)$/);
    const ev = e.events(s.session_id);
    expect(ev.filter((x) => x.hook_event_name === "SessionStart").map((x) => x.source)).toEqual(["startup", "compact"]);
    // The summary request carried the instructions.
    expect(e.mock.requests.some((r) => JSON.stringify(r.body ?? {}).includes("keep the bird names"))).toBe(true);
    const next = await m.callOk("send_message", { session_id: s.session_id, message: "after compaction" });
    expect(next.response).toBe("MOCK REPLY: after compaction");
    await m.callOk("kill_session", { session_id: s.session_id });
    await m.close();
  });

  it("headless: reset and compact go through the SDK as slash commands; a running session forks", async () => {
    const m = await e.connect();
    const s = await m.callOk("start_session", { cwd: e.dir("headless"), backend: "headless" });
    await m.callOk("send_message", { session_id: s.session_id, message: "remember the word stork" });
    const c = await m.call("compact_session", { session_id: s.session_id });
    expect(c.ok, c.text).toBe(true);
    expect(c.data.claude_session_id).toBe(s.claude_session_id);
    const r = await m.call("reset_session", { session_id: s.session_id });
    expect(r.ok, r.text).toBe(true);
    expect(r.data.old_claude_session_id).toBe(s.claude_session_id);
    expect(r.data.claude_session_id).not.toBe(s.claude_session_id);
    const next = await m.callOk("send_message", { session_id: s.session_id, message: "headless fresh" });
    expect(next.response).toBe("MOCK REPLY: headless fresh");
    const [req] = e.requestsWith("headless fresh");
    expect(e.userTexts(req!).join("\n")).not.toContain("stork");
    const listed = await m.callOk("list_sessions", {});
    expect(listed.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({
      claude_session_id: r.data.claude_session_id,
      status: "idle",
    });

    // A fork of the running headless session (the SDK's forkSession): a new session with the conversation so far.
    const f = await m.call("resume_session", { session_id: s.session_id, fork: true });
    expect(f.ok, f.text).toBe(true);
    expect(f.data).toMatchObject({ backend: "headless", forked_from: s.session_id });
    expect(f.data.claude_session_id).not.toBe(r.data.claude_session_id);
    const fr = await m.callOk("send_message", { session_id: f.data.session_id, message: "forked headless" });
    expect(fr.response).toBe("MOCK REPLY: forked headless");
    expect(e.userTexts(e.requestsWith("forked headless")[0]!)).toContain("headless fresh");
    const pr = await m.callOk("send_message", { session_id: s.session_id, message: "parent headless" });
    expect(pr.response).toBe("MOCK REPLY: parent headless");
    expect(e.userTexts(e.requestsWith("parent headless")[0]!)).not.toContain("forked headless");
    // The fork's totals are its one turn (the copied history is the parent's).
    const fRow = await until(async () => {
      const l = await m.callOk("list_sessions", {});
      const x = l.sessions.find((y) => y.session_id === f.data.session_id);
      return x?.total_usage ? x : undefined;
    }, 10_000);
    const ex = await m.callOk("get_execution_history", { session_id: f.data.session_id });
    expect(ex.executions).toHaveLength(1);
    expect(fRow.total_usage?.output_tokens).toBe(ex.executions[0]?.usage?.output_tokens);
    await m.callOk("kill_session", { session_id: f.data.session_id });
    await m.callOk("kill_session", { session_id: s.session_id });
    await m.close();
  });

  it("resume_session with another model runs the CLI on it", async () => {
    const m = await e.connect();
    const s = await m.callOk("start_session", { cwd: e.dir("model"), model: "claude-sonnet-4-5" });
    await m.callOk("send_message", { session_id: s.session_id, message: "first model" });
    expect(e.requestsWith("first model")[0]?.model).toBe("claude-sonnet-4-5");
    await m.callOk("kill_session", { session_id: s.session_id });
    const r = await m.call("resume_session", { session_id: s.session_id, model: "claude-opus-4-8", message: "second model" });
    expect(r.ok, r.text).toBe(true);
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 30_000 });
    expect(e.requestsWith("second model")[0]?.model).toBe("claude-opus-4-8");
    await m.callOk("kill_session", { session_id: s.session_id });
    await m.close();
  });

  it("a fork of a running session is a new session; both answer, each with its own totals", async () => {
    const m = await e.connect();
    const cwd = e.dir("fork");
    const p = await m.callOk("start_session", { cwd });
    await m.callOk("send_message", { session_id: p.session_id, message: "remember the word crane" });
    const f = await m.call("resume_session", { session_id: p.session_id, fork: true, message: "forked: what was the word?" });
    expect(f.ok, f.text).toBe(true);
    expect(f.data.session_id).not.toBe(p.session_id);
    expect(f.data.forked_from).toBe(p.session_id);
    await m.callOk("wait_for_completion", { session_id: f.data.session_id, timeout_ms: 30_000 });
    const [forked] = e.requestsWith("forked: what was the word?");
    expect(e.userTexts(forked!)).toEqual(expect.arrayContaining(["remember the word crane"]));
    const pr = await m.callOk("send_message", { session_id: p.session_id, message: "parent goes on" });
    expect(pr.response).toBe("MOCK REPLY: parent goes on");
    const [parentReq] = e.requestsWith("parent goes on");
    expect(e.userTexts(parentReq!).join("\n")).not.toContain("forked:");

    const rows = await until(async () => {
      const l = await m.callOk("list_sessions", {});
      const a = l.sessions.find((x) => x.session_id === p.session_id);
      const b = l.sessions.find((x) => x.session_id === f.data.session_id);
      return a?.turn_count === 2 && b?.total_usage ? { a, b } : undefined;
    }, 10_000);
    expect(rows.a).toMatchObject({ status: "idle", claude_session_id: p.claude_session_id });
    expect(rows.b).toMatchObject({ status: "idle", claude_session_id: f.data.claude_session_id, turn_count: 1 });
    // The fork's totals are its one turn: the mock's usage per reply, not the copied history's.
    const perTurn = await m.callOk("get_execution_history", { session_id: f.data.session_id });
    expect(rows.b.total_usage?.output_tokens).toBe(perTurn.executions[0]?.usage?.output_tokens);
    await m.callOk("kill_session", { session_id: f.data.session_id });
    await m.callOk("kill_session", { session_id: p.session_id });
    await m.close();
  });
});

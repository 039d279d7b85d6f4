/**
 * The real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts): kill, resume and fork keep
 * (or branch) the conversation; a restarted server adopts a live session. See tests/helpers/real-claude.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: kill, resume, fork, server restart", () => {
  let e: E2e;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["resume", "restart"] });
  });
  afterAll(async () => {
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("f. kill records SessionEnd; resume keeps the Claude session id and the conversation; fork branches it", async () => {
    const m = await e.connect();
    const cwd = e.dir("resume");
    const s = await m.call("start_session", { cwd, permission_mode: "default" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const claudeId = s.data.claude_session_id as string;
    const first = await m.call("send_message", { session_id: id, message: "remember the word pelican" });
    expect(first.data.response).toBe("MOCK REPLY: remember the word pelican");

    const k = await m.call("kill_session", { session_id: id });
    expect(k.data.status).toBe("killed");
    expect(e.events(id).filter((x) => x.hook_event_name === "SessionEnd")).toHaveLength(1);

    const r = await m.call("resume_session", { session_id: id, message: "what was the word?" });
    expect(r.ok, r.text).toBe(true);
    expect(r.data).toMatchObject({ session_id: id, claude_session_id: claudeId, forked: false });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(done.data).toMatchObject({ completed: true, last_response: "MOCK REPLY: what was the word?" });
    // The API saw the earlier turn again: the conversation carried over.
    const [resumed] = e.requestsWith("what was the word?");
    expect(e.userTexts(resumed!)).toEqual(expect.arrayContaining(["remember the word pelican", "what was the word?"]));
    expect(
      e
        .events(id)
        .filter((x) => x.hook_event_name === "SessionStart")
        .map((x) => x.source),
    ).toEqual(["startup", "resume"]);

    await m.call("kill_session", { session_id: id });
    const oldFile = e.transcriptFile(cwd, claudeId);
    const oldTranscript = readFileSync(oldFile, "utf8");
    expect(oldTranscript).toContain("what was the word?");

    const f = await m.call("resume_session", { session_id: id, fork: true, message: "forked turn" });
    expect(f.ok, f.text).toBe(true);
    expect(f.data.forked).toBe(true);
    const forkId = f.data.claude_session_id as string;
    expect(forkId).not.toBe(claudeId);
    // A fork is a new session; the parent's record keeps its conversation.
    const forkSession = f.data.session_id as string;
    expect(forkSession).not.toBe(id);
    const fd = await m.call("wait_for_completion", { session_id: forkSession, timeout_ms: 20_000 });
    expect(fd.data).toMatchObject({ completed: true, last_response: "MOCK REPLY: forked turn" });
    const [forked] = e.requestsWith("forked turn");
    expect(e.userTexts(forked!)).toEqual(
      expect.arrayContaining(["remember the word pelican", "what was the word?", "forked turn"]),
    );
    const listed = await m.call("list_sessions", {});
    expect(listed.data.sessions.find((x) => x.session_id === forkSession)?.claude_session_id).toBe(forkId);
    expect(listed.data.sessions.find((x) => x.session_id === id)?.claude_session_id).toBe(claudeId);
    // The fork writes its own transcript; the old one is left as it was.
    await until(
      () =>
        existsSync(e.transcriptFile(cwd, forkId)) && readFileSync(e.transcriptFile(cwd, forkId), "utf8").includes("forked turn"),
    );
    expect(readFileSync(oldFile, "utf8")).toBe(oldTranscript);
    await m.call("kill_session", { session_id: forkSession });
    await m.call("kill_session", { session_id: id });
    await m.close();
  });

  it("h. a server restarted between two prompts adopts the live session, which answers the next prompt", async () => {
    const m1 = await e.connect();
    const s = await m1.call("start_session", { cwd: e.dir("restart"), permission_mode: "default" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const before = await m1.call("send_message", { session_id: id, message: "before the restart" });
    expect(before.data.response).toBe("MOCK REPLY: before the restart");
    const slow = "MOCK_SLOW:2 in flight across the restart";
    await m1.call("send_message", { session_id: id, message: slow, wait_for_response: false });
    await m1.close(); // the server exits; tmux keeps the session

    const m2 = await e.connect();
    const l = await m2.call("list_sessions", {});
    expect(["busy", "idle"]).toContain(l.data.sessions.find((x) => x.session_id === id)?.status);
    const w = await m2.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(w.data).toMatchObject({ completed: true, last_response: `MOCK REPLY: ${slow}` });
    const after = await m2.call("send_message", { session_id: id, message: "after the restart" });
    expect(after.data).toMatchObject({ final_state: "idle", response: "MOCK REPLY: after the restart" });
    await m2.call("kill_session", { session_id: id });
    await m2.close();
  });
});

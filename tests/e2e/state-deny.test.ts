/**
 * Issue #19, item 8, with the real Claude Code CLI (offline, against the mock API), on tmux: the deny rules of the
 * settings file the server writes keep a session's file tools off the server's own files in acceptEdits (no
 * dialog, the tool fails at once): the permission script, another session's decisions, state.json. A session in
 * a worktree the server made (under <state>/worktrees/) still edits its own checkout.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: the server's files are denied to a session's file tools (tmux)", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["work", "repo"], serverEnv: { CLAUDE_SESSIONS_BACKEND: "tmux" } });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? []).toEqual([]);
    await e?.cleanup();
  });

  const writes = async (id: string, path: string, content: string) => {
    const r = await m.call("send_message", { session_id: id, message: `MOCK_WRITE:${path}:${content}`, timeout_ms: 30_000 });
    expect(r.ok, r.text).toBe(true);
    return r.data as { completed: boolean; final_state: string; response?: string };
  };

  it("Write to bin/permission.sh, another session's decisions or state.json fails at once; nothing changes", async () => {
    const state = e.world.stateDir;
    const other = await m.callOk("start_session", { cwd: e.dir("work"), permission_mode: "default" });
    const s = await m.callOk("start_session", { cwd: e.dir("work"), permission_mode: "acceptEdits" });
    const script = join(state, "bin", "permission.sh");
    const before = readFileSync(script, "utf8");
    // Existing files (the CLI's Write also wants them read first) and new ones: a decision, a script, a top-level file.
    const created = [
      join(state, other.session_id, "decisions", "r1x1.json"),
      join(state, "bin", "extra.sh"),
      join(state, "new.json"),
      join(state, other.session_id, "settings.local.json"),
    ];
    for (const target of [script, join(state, "state.json"), ...created]) {
      const r = await writes(s.session_id, target, "pwned");
      expect(r, target).toMatchObject({ completed: true, final_state: "idle", response: "MOCK: tool failed" });
    }
    expect(readFileSync(script, "utf8")).toBe(before);
    for (const f of created) expect(existsSync(f), f).toBe(false);
    expect(JSON.parse(readFileSync(join(state, "state.json"), "utf8"))).toHaveProperty("sessions");
    // Its own cwd is writable as before.
    const ok = await writes(s.session_id, join(e.dir("work"), "fine.txt"), "hello");
    expect(ok).toMatchObject({ completed: true, response: "MOCK: tool done" });
    expect(readFileSync(join(e.dir("work"), "fine.txt"), "utf8")).toBe("hello");
    for (const id of [s.session_id, other.session_id]) await m.call("kill_session", { session_id: id });
  });

  it("Read of the HTTP token file fails at once; its value never reaches the API", async () => {
    const token = join(e.world.stateDir, "token");
    writeFileSync(token, "tok-7d1e9c2b-never-to-the-api\n", { mode: 0o600 });
    const s = await m.callOk("start_session", { cwd: e.dir("work"), permission_mode: "acceptEdits" });
    const r = await m.call("send_message", { session_id: s.session_id, message: `MOCK_READ:${token}`, timeout_ms: 30_000 });
    expect(r.data, r.text).toMatchObject({ completed: true, final_state: "idle", response: "MOCK: tool failed" });
    expect(JSON.stringify(e.mock.mainRequests())).not.toContain("tok-7d1e9c2b");
    await m.call("kill_session", { session_id: s.session_id });
  });

  it("a session in its worktree (under <state>/worktrees) still edits its own checkout", async () => {
    const repo = e.dir("repo");
    const git = (...a: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...a], { cwd: repo, encoding: "utf8" });
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), "base\n");
    git("add", ".");
    git("commit", "-qm", "first");
    const s = await m.callOk("start_session", {
      cwd: repo,
      worktree: true,
      permission_mode: "acceptEdits",
      trust_workspace: true,
    });
    expect(s.cwd!.startsWith(join(e.world.stateDir, "worktrees"))).toBe(true);
    // A new file at the top of the checkout and one deeper (the CLI's Write wants an existing file read first).
    for (const f of ["new.txt", join("src", "deep", "new.txt")]) {
      const r = await writes(s.session_id, join(s.cwd!, f), "edited");
      expect(r, f).toMatchObject({ completed: true, response: "MOCK: tool done" });
      expect(readFileSync(join(s.cwd!, f), "utf8")).toBe("edited");
    }
    await m.call("kill_session", { session_id: s.session_id });
  });
});

/**
 * sync_context and send_message {include_context} (issue #13), with real git, real tmux and the fake claude: what a
 * session is told after a file change and a branch switch, nothing when nothing changed, env NAMES never values.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";
import { promptsOf } from "../helpers/events.js";

const TMUX = tmuxOrSkip();

describe.runIf(TMUX)("sync_context (tmux, fake claude, real git)", () => {
  let w: World;
  let m: Mcp;
  let repo: string;
  let id: string;
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd: repo,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const lastPrompt = () => promptsOf(w.stateDir, id).at(-1) ?? "";
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    m = await connect(w);
    repo = w.dir("repo");
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), "one\n");
    git("add", ".");
    git("commit", "-qm", "first");
    id = (await m.callOk("start_session", { cwd: repo, team_name: "sync" })).session_id;
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("the first sync tells the whole state; with nothing changed, the next sends nothing unless force", async () => {
    const first = await m.callOk("sync_context", { session_id: id });
    expect(first).toMatchObject({ session_id: id, sent: true, git_status_synced: true });
    expect(Date.parse(first.synced_at)).toBeGreaterThan(0);
    expect(lastPrompt()).toContain("Git: branch main");
    expect(lastPrompt()).toContain("Status: clean");
    const count = promptsOf(w.stateDir, id).length;
    const again = await m.callOk("sync_context", { session_id: id });
    expect(again).toMatchObject({ sent: false, git_status_synced: false, files_synced: 0, env_vars_synced: 0 });
    expect(promptsOf(w.stateDir, id)).toHaveLength(count);
    const forced = await m.callOk("sync_context", { session_id: id, force: true });
    expect(forced.sent).toBe(true);
    expect(promptsOf(w.stateDir, id)).toHaveLength(count + 1);
  });

  it("after a file change: the file as an @ mention and the new status; after a branch switch: the branch", async () => {
    writeFileSync(join(repo, "a.txt"), "two\n");
    const r = await m.callOk("sync_context", { session_id: id, context_type: "all" });
    expect(r).toMatchObject({ sent: true, git_status_synced: true, files_synced: 1 });
    expect(lastPrompt()).toContain("@a.txt");
    expect(lastPrompt()).toContain(" M a.txt");
    expect(lastPrompt()).toMatch(/a\.txt \| 2 \+-/);
    // Named paths: only what changed since it was last mentioned.
    const named = await m.callOk("sync_context", { session_id: id, context_type: "files", paths: ["a.txt"] });
    expect(named).toMatchObject({ sent: false, files_synced: 0 });
    git("commit", "-qam", "two");
    git("checkout", "-qb", "feature-x");
    const b = await m.callOk("sync_context", { team_name: "sync", teammate_name: "member-1", context_type: "git" });
    expect(b).toMatchObject({ sent: true, git_status_synced: true });
    expect(lastPrompt()).toContain("Git: branch feature-x");
    const out = await m.callOk("sync_context", {
      session_id: id,
      context_type: "files",
      paths: ["../../etc/passwd", "no-such-file", "has space.txt"],
    });
    expect(out.sent).toBe(false);
    expect(out.warnings).toHaveLength(3);
  });

  it("env: the names of changed .env variables, never their values", async () => {
    writeFileSync(join(repo, ".env"), "API_URL=https://secret-host.example\nTOKEN=sk-very-secret-value\n");
    const r = await m.callOk("sync_context", { session_id: id, context_type: "env" });
    expect(r).toMatchObject({ sent: true, env_vars_synced: 2 });
    expect(lastPrompt()).toContain("API_URL, TOKEN");
    writeFileSync(join(repo, ".env"), "API_URL=https://secret-host.example\nTOKEN=sk-another-secret\n");
    const r2 = await m.callOk("sync_context", { session_id: id, context_type: "env" });
    expect(r2).toMatchObject({ sent: true, env_vars_synced: 1 });
    expect(lastPrompt()).toMatch(/changed: TOKEN\b/);
    for (const p of promptsOf(w.stateDir, id)) expect(p).not.toMatch(/secret-host|sk-very|sk-another/);
    const state = readFileSync(join(w.stateDir, "state.json"), "utf8");
    expect(state).not.toMatch(/secret-host|sk-very|sk-another/);
    expect(JSON.stringify(r) + JSON.stringify(r2)).not.toMatch(/secret/);
  });

  it("send_message {include_context} puts the changes before the message; a team sync reports per member", async () => {
    writeFileSync(join(repo, "b.txt"), "new file\n");
    const r = await m.callOk("send_message", { session_id: id, message: "now do the task", include_context: true });
    const p = lastPrompt();
    expect(p.indexOf("@b.txt")).toBeGreaterThan(-1);
    expect(p.endsWith("now do the task")).toBe(true);
    // .env files are never mentioned (Claude would read their values); the env part names the variables.
    expect(p).not.toContain("@.env");
    expect(r.response).toContain("now do the task");
    const plain = await m.callOk("send_message", { session_id: id, message: "nothing new", include_context: true });
    expect(plain.response).toBe("FAKE REPLY: nothing new");
    const team = await m.callOk("sync_context", { team_name: "sync" });
    expect(team.results).toHaveLength(1);
    expect(team.results![0]).toMatchObject({ session_id: id, sent: false });
  });

  it("a session whose cwd is not in git gets a warning, not a failure", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("plain") });
    const r = await m.callOk("sync_context", { session_id: s.session_id, context_type: "git" });
    expect(r.sent).toBe(false);
    expect(r.warnings?.[0]).toContain("not in a git repository");
    const bad = await m.call("sync_context", { session_id: s.session_id, context_type: "git", paths: ["x"] });
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
  });

  it("a FIFO named .env or named in paths is never read (the sync answers at once); a regular file is", async () => {
    const dir = w.dir("fifo");
    execFileSync("mkfifo", [join(dir, ".env"), join(dir, "pipe.txt")]);
    writeFileSync(join(dir, "notes.txt"), "plain\n");
    const s = await m.callOk("start_session", { cwd: dir });
    const t0 = Date.now();
    // Before: the server's read of the FIFO waited for a writer that never comes, and the call with it.
    const r = await Promise.race([
      m.call("sync_context", { session_id: s.session_id, context_type: "all", paths: ["pipe.txt", "notes.txt"] }),
      new Promise<never>((_, no) => setTimeout(() => no(new Error("sync_context hung on a FIFO")), 20_000)),
    ]);
    expect(r.ok, r.text).toBe(true);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.data).toMatchObject({ sent: true, files_synced: 2, env_vars_synced: 0 });
    // The server answers other calls as before.
    expect((await m.callOk("list_sessions", {})).sessions.some((x) => x.session_id === s.session_id)).toBe(true);
  });
});

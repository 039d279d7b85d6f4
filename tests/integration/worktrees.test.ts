/**
 * A git worktree per session (issue #13), with real git and real tmux: two sessions of one repository edit the same
 * file without seeing each other's change; copy_files and setup_command; a failing setup leaves nothing behind;
 * kill_session {remove_worktree} refuses a dirty tree unless force.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const TMUX = tmuxOrSkip();

describe.runIf(TMUX)("worktrees (tmux, fake claude, real git)", () => {
  let w: World;
  let m: Mcp;
  let repo: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  beforeAll(async () => {
    // The programs setup commands may run on this server (the operator's list; none by default).
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux", CLAUDE_SESSIONS_SETUP_COMMANDS: "touch,sh" });
    m = await connect(w);
    repo = w.dir("repo");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), "base\n");
    writeFileSync(join(repo, ".gitignore"), ".env\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    writeFileSync(join(repo, ".env"), "TOKEN=not-in-git\n");
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("two sessions in two worktrees of one repo edit the same file without seeing each other's change", async () => {
    const [a, b] = await Promise.all([
      m.callOk("start_session", {
        cwd: repo,
        worktree: true,
        permission_mode: "dontAsk",
        copy_files: [".env"],
        setup_command: ["touch", "setup-ran"],
      }),
      m.callOk("start_session", { cwd: repo, worktree: { branch: "feature/b", base: "main" }, permission_mode: "dontAsk" }),
    ]);
    expect(a.worktree).toMatchObject({ branch: `cs/${a.session_id}`, base: "main" });
    expect(b.worktree).toMatchObject({ branch: "feature/b", base: "main" });
    expect(a.cwd).toBe(a.worktree!.path);
    expect(a.worktree!.path.startsWith(w.stateDir)).toBe(true);
    expect(readFileSync(join(a.cwd!, ".env"), "utf8")).toBe("TOKEN=not-in-git\n");
    expect(existsSync(join(a.cwd!, "setup-ran"))).toBe(true);
    expect(existsSync(join(b.cwd!, ".env"))).toBe(false);
    const log = await m.callOk("stream_output", { session_id: a.session_id, mode: "log" });
    expect(log.text).toContain('$ ["touch","setup-ran"]');

    await Promise.all([
      m.callOk("send_message", { session_id: a.session_id, message: "FAKE_BASH:echo from-a > a.txt" }),
      m.callOk("send_message", { session_id: b.session_id, message: "FAKE_BASH:echo from-b > a.txt" }),
    ]);
    expect(readFileSync(join(a.cwd!, "a.txt"), "utf8")).toBe("from-a\n");
    expect(readFileSync(join(b.cwd!, "a.txt"), "utf8")).toBe("from-b\n");
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("base\n");

    const listed = await m.callOk("list_sessions", {});
    const by = Object.fromEntries(listed.sessions.map((s) => [s.session_id, s]));
    expect(by[a.session_id]).toMatchObject({ branch: `cs/${a.session_id}`, base: "main", dirty: true });
    expect(by[b.session_id]).toMatchObject({ branch: "feature/b", base: "main", dirty: true });

    // A dirty worktree is refused, and nothing is ended.
    const refused = await m.call("kill_session", { session_id: a.session_id, remove_worktree: true });
    expect(refused.error?.code).toBe("INVALID_ARGUMENT");
    expect(refused.error?.message).toContain("uncommitted changes");
    const still = await m.callOk("list_sessions", {});
    expect(still.sessions.find((s) => s.session_id === a.session_id)!.status).toBe("idle");

    // force removes it anyway; the branch stays.
    const kb = await m.callOk("kill_session", { session_id: b.session_id, remove_worktree: true, force: true });
    expect(kb).toMatchObject({ status: "killed", worktree_removed: true });
    expect(existsSync(b.cwd!)).toBe(false);
    expect(git(repo, "branch", "--list", "feature/b").trim()).toContain("feature/b");
    const gone = await m.callOk("list_sessions", {});
    expect(gone.sessions.find((s) => s.session_id === b.session_id)).not.toHaveProperty("branch");

    // Clean once committed (the change and the file setup_command made): removed without force.
    git(a.cwd!, "add", "-A");
    git(a.cwd!, "commit", "-qm", "from a");
    const ka = await m.callOk("kill_session", { session_id: a.session_id, remove_worktree: true });
    expect(ka).toMatchObject({ worktree_removed: true });
    expect(existsSync(a.cwd!)).toBe(false);
    expect(git(repo, "log", "--format=%s", `cs/${a.session_id}`).trim().split("\n")[0]).toBe("from a");
  });

  it("a failing setup_command gives PROCESS_ERROR with its output and leaves nothing behind", async () => {
    const before = await m.callOk("list_sessions", {});
    const branchesBefore = git(repo, "branch", "--list").trim();
    const r = await m.call("start_session", {
      session_id: "setup-fails",
      cwd: repo,
      worktree: true,
      setup_command: ["sh", "-c", "echo broken-setup-output; exit 3"],
    });
    expect(r.error?.code).toBe("PROCESS_ERROR");
    expect(r.error?.message).toContain("broken-setup-output");
    expect(r.error?.message).toContain("exit 3");
    expect(existsSync(join(w.stateDir, "worktrees", "setup-fails"))).toBe(false);
    expect(existsSync(join(w.stateDir, "setup-fails"))).toBe(false);
    expect(git(repo, "branch", "--list").trim()).toBe(branchesBefore);
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
    expect((await m.callOk("list_sessions", {})).total_count).toBe(before.total_count);
    expect(readdirSync(join(w.stateDir, "worktrees"))).toEqual([]);
  });

  it("refuses a shell command line unless the operator allows it, a cwd outside git, bad refs, and copy_files outside the repo", async () => {
    const sh = await m.call("start_session", { cwd: repo, worktree: true, setup_command: "npm ci && touch x" });
    expect(sh.error?.code).toBe("PERMISSION_DENIED");
    expect(sh.error?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_SETUP_SHELL");
    const plain = w.dir("not-a-repo");
    const ng = await m.call("start_session", { cwd: plain, worktree: true });
    expect(ng.error?.code).toBe("INVALID_ARGUMENT");
    expect(ng.error?.message).toContain("not in a git repository");
    for (const wt of [{ branch: "-x" }, { base: "--upload-pack=touch /tmp/x" }, { base: "no-such-branch" }, { branch: "main" }]) {
      const r = await m.call("start_session", { cwd: repo, worktree: wt });
      expect(r.error?.code, JSON.stringify(wt)).toBe("INVALID_ARGUMENT");
    }
    const out = await m.call("start_session", { cwd: repo, worktree: true, copy_files: ["../outside"] });
    expect(out.error?.code).toBe("INVALID_ARGUMENT");
    const noWt = await m.call("start_session", { cwd: repo, setup_command: ["true"] });
    expect(noWt.error?.code).toBe("INVALID_ARGUMENT");
    expect(readdirSync(join(w.stateDir, "worktrees"))).toEqual([]);
  });

  it("setup_command runs only a program of the operator's list, matched on its resolved path; every other form is refused before anything is made", async () => {
    const sentinel = join(w.root, "pwned-setup");
    const shReal = execFileSync("sh", ["-c", "command -v sh"], { encoding: "utf8" }).trim();
    // A link named like an allowed program that is another one; a relative path; interpreters and wrappers.
    const disguised = join(w.dir("disguise"), "touch");
    symlinkSync(shReal, disguised);
    const branchesBefore = git(repo, "branch", "--list").trim();
    const m2 = await connect(w, { CLAUDE_SESSIONS_SETUP_COMMANDS: "touch" });
    const mNone = await connect(w, { CLAUDE_SESSIONS_SETUP_COMMANDS: "" });
    try {
      const hostile: string[][] = [
        ["/bin/sh", "-c", `id > ${sentinel}`],
        ["sh", "-c", `id > ${sentinel}`],
        ["env", "sh", "-c", `id > ${sentinel}`],
        ["python3", "-c", `open('${sentinel}','w')`],
        [process.execPath, "-e", `require('fs').writeFileSync('${sentinel}','')`],
        ["git", "-c", `alias.x=!touch ${sentinel}`, "x"],
        [disguised, "-c", `id > ${sentinel}`],
        ["./touch", sentinel],
        ["no-such-program-here", sentinel],
      ];
      for (const argv of hostile) {
        const r = await m2.call("start_session", { cwd: repo, worktree: true, setup_command: argv });
        expect(r.error?.code, JSON.stringify(argv)).toBe("PERMISSION_DENIED");
        expect(r.error?.suggestion, JSON.stringify(argv)).toContain("CLAUDE_SESSIONS_SETUP_COMMANDS");
      }
      // With no list, not even an everyday program runs; the string form needs its own switch as well.
      const none = await mNone.call("start_session", { cwd: repo, worktree: true, setup_command: ["touch", sentinel] });
      expect(none.error?.code).toBe("PERMISSION_DENIED");
      expect(none.error?.suggestion).toContain("CLAUDE_SESSIONS_SETUP_COMMANDS");
      const str = await m2.call("start_session", { cwd: repo, worktree: true, setup_command: `touch ${sentinel}` });
      expect(str.error?.code).toBe("PERMISSION_DENIED");
      expect(str.error?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_SETUP_SHELL");
      expect(existsSync(sentinel)).toBe(false);
      expect(readdirSync(join(w.stateDir, "worktrees"))).toEqual([]);
      expect(git(repo, "branch", "--list").trim()).toBe(branchesBefore);
      // The listed program runs, by the path it resolved to (a caller's PATH in env is refused anyway).
      const s = await m2.callOk("start_session", { cwd: repo, worktree: true, setup_command: ["touch", "listed-ran"] });
      expect(existsSync(join(s.cwd!, "listed-ran"))).toBe(true);
      await m2.callOk("kill_session", { session_id: s.session_id, remove_worktree: true, force: true });
    } finally {
      await m2.close();
      await mNone.close();
    }
  });

  it("runs a shell setup command when the operator allows it", async () => {
    const m2 = await connect(w, { CLAUDE_SESSIONS_ALLOW_SETUP_SHELL: "1" });
    try {
      const s = await m2.callOk("start_session", { cwd: repo, worktree: true, setup_command: "echo shell-setup > marker.txt" });
      expect(readFileSync(join(s.cwd!, "marker.txt"), "utf8")).toBe("shell-setup\n");
      await m2.callOk("kill_session", { session_id: s.session_id, remove_worktree: true, force: true });
      expect(existsSync(s.cwd!)).toBe(false);
    } finally {
      await m2.close();
    }
  });
});

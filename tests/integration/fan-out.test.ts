/**
 * fan_out (issue 34) with real git, the fake claude (headless) and the operator's checks: three attempts of one
 * prompt, one of which breaks the checks (the first to claim a marker writes the wrong answer) → ranked last; bad
 * input refused before anything is made; a fan-out whose sessions do not all start leaves no worktree or branch.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, type Mcp, type World } from "../helpers/harness.js";

describe("fan_out (headless, fake claude, real git)", () => {
  let w: World;
  let m: Mcp;
  let checksFile: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const newRepo = (name: string) => {
    const repo = w.dir(name);
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    return repo;
  };
  const branches = (repo: string) => git(repo, "branch", "--format=%(refname:short)").trim().split("\n").filter(Boolean).sort();
  const worktrees = () => (existsSync(join(w.stateDir, "worktrees")) ? readdirSync(join(w.stateDir, "worktrees")) : []);

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless", CLAUDE_SESSIONS_MAX_FAN_OUT: "3" });
    checksFile = join(w.root, "checks.json");
    writeFileSync(
      checksFile,
      JSON.stringify({ checks: [{ name: "answer", argv: ["grep", "-qx", "good", "app.txt"], timeout_ms: 10_000 }] }),
    );
    m = await connect(w, { CLAUDE_SESSIONS_CHECKS: checksFile });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("three attempts from one base commit: the one that breaks the checks is ranked last", async () => {
    const repo = newRepo("fan");
    const marker = join(w.root, "first-claim");
    const prompt = `FAKE_BASH:if mkdir ${marker} 2>/dev/null; then echo bad > app.txt; else echo good > app.txt; fi`;
    const progress: string[] = [];
    const args = {
      cwd: repo,
      prompt,
      n: 3,
      permission_mode: "dontAsk",
      trust_workspace: true,
      timeout_ms: 60_000,
      idempotency_key: "fan-1",
    } as const;
    const r = await m.callOk("fan_out", args, {
      timeout: 120_000,
      onprogress: (p) => progress.push((p as { message?: string }).message ?? ""),
    });
    // A retry with the same idempotency_key is the same fan-out, not three more sessions.
    const again = await m.callOk("fan_out", args, { timeout: 120_000 });
    expect(again.attempts.map((a) => a.session_id)).toEqual(r.attempts.map((a) => a.session_id));
    expect(r.base_commit).toBe(git(repo, "rev-parse", "HEAD").trim());
    expect(r.checks_source).toBe("config");
    expect(r.attempts.map((a) => a.rank)).toEqual([1, 2, 3]);
    expect(r.attempts.map((a) => a.outcome)).toEqual(["completed", "completed", "completed"]);
    expect(r.attempts.map((a) => a.checks_passed)).toEqual([1, 1, 0]);
    const last = r.attempts[2]!;
    expect(last.checks[0]).toMatchObject({ name: "answer", passed: false, exit_code: 1, timed_out: false });
    for (const a of r.attempts) {
      expect(a.diff).toEqual({ files: 1, added: 1, removed: 1 });
      expect(a.branch).toBe(`cs/${a.session_id}`);
      expect(git(a.worktree, "rev-parse", "HEAD").trim()).toBe(r.base_commit);
      expect(a.summary).toContain("FAKE: ran");
    }
    expect(r.table).toContain(`| 3 | ${last.session_id} |`);
    expect(r.table).toContain("0/1");
    // The base is untouched; a progress notification per attempt that ended and per worktree checked.
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(progress.filter((p) => /\(\d\/3\)/.test(p))).toHaveLength(3);
    expect(progress.filter((p) => p.startsWith("checks of"))).toHaveLength(3);
  });

  it("an attempt that does not answer before the deadline is ranked last, timed out, with its reason", async () => {
    const repo = newRepo("slow");
    const marker = join(w.root, "slow-claim");
    const prompt = `FAKE_BASH:if mkdir ${marker} 2>/dev/null; then sleep 30; fi; echo good > app.txt`;
    const r = await m.callOk(
      "fan_out",
      { cwd: repo, prompt, n: 2, permission_mode: "dontAsk", trust_workspace: true, timeout_ms: 8_000 },
      { timeout: 120_000 },
    );
    expect(r.attempts.map((a) => a.outcome)).toEqual(["completed", "timed_out"]);
    expect(r.attempts[1]!.reason).toBe("no answer within 8000 ms");
    expect(r.attempts[1]!.checks_passed).toBe(0);
    expect(r.attempts[0]!.checks_passed).toBe(1);
    expect(r.table).toMatch(/\| 2 \| \S+ \|  \| timed_out: no answer within 8000 ms \|/);
    for (const a of r.attempts) await m.callOk("kill_session", { session_id: a.session_id, force: true });
  });

  it("bad input is refused before anything is made", async () => {
    const before = worktrees();
    const notRepo = w.dir("plain");
    const e1 = await m.call("fan_out", { cwd: notRepo, prompt: "hi", n: 2 });
    expect(e1.error?.code).toBe("INVALID_ARGUMENT");
    expect(e1.error?.message).toContain("not in a git repository");

    const dirty = newRepo("dirty");
    writeFileSync(join(dirty, "app.txt"), "changed\n");
    const e2 = await m.call("fan_out", { cwd: dirty, prompt: "hi", n: 2 });
    expect(e2.error?.code).toBe("INVALID_ARGUMENT");
    expect(e2.error?.message).toContain("uncommitted changes");

    const repo = newRepo("limit");
    const e3 = await m.call("fan_out", { cwd: repo, prompt: "hi", n: 4 });
    expect(e3.error?.code).toBe("LIMIT_REACHED");
    expect(e3.error?.message).toContain("CLAUDE_SESSIONS_MAX_FAN_OUT");

    // A checks file in the repository that the operator has not approved.
    mkdirSync(join(repo, ".claude-sessions"));
    writeFileSync(join(repo, ".claude-sessions", "checks.json"), JSON.stringify({ checks: [{ name: "x", argv: ["true"] }] }));
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "checks");
    const e4 = await m.call("fan_out", { cwd: repo, prompt: "hi", n: 2 });
    expect(e4.error?.code).toBe("PERMISSION_DENIED");
    expect(e4.error?.message).toContain("not approved");

    expect(worktrees()).toEqual(before);
    for (const r of [dirty, repo]) expect(branches(r)).toEqual(["main"]);
    const listed = await m.callOk("list_sessions", {});
    expect(listed.sessions.filter((s) => s.cwd?.includes(repo))).toEqual([]);
  });

  it("a fan-out whose sessions do not all start removes every worktree and branch it made", async () => {
    const repo = newRepo("undo");
    const before = worktrees();
    const r = await m.call("fan_out", {
      cwd: repo,
      prompt: "hello",
      trust_workspace: true,
      variants: [{ permission_mode: "dontAsk" }, { permission_mode: "bypassPermissions" }],
      timeout_ms: 30_000,
    });
    expect(r.error?.code).toBe("PERMISSION_DENIED");
    expect(r.error?.message).toContain("worktrees and branches removed");
    expect(worktrees()).toEqual(before);
    expect(branches(repo)).toEqual(["main"]);
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  });
});

describe("claude-sessions checks approve / fan-out (CLI)", () => {
  let w: World;
  let m: Mcp;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 120_000, cwd: w.root });
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("a repository's checks file runs only once approved by its SHA-256; a changed file needs approval again", async () => {
    const repo = w.dir("approved");
    git(repo, "init", "-q", "-b", "main");
    mkdirSync(join(repo, ".claude-sessions"));
    const checks = (argv: string[]) =>
      writeFileSync(join(repo, ".claude-sessions", "checks.json"), JSON.stringify({ checks: [{ name: "answer", argv }] }));
    checks(["grep", "-qx", "good", "app.txt"]);
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    const refused = await m.call("fan_out", {
      cwd: repo,
      prompt: "FAKE_BASH:echo good > app.txt",
      n: 1,
      permission_mode: "dontAsk",
      trust_workspace: true,
    });
    expect(refused.error?.code).toBe("PERMISSION_DENIED");

    const show = cli("checks", "show", repo);
    expect(show.status).toBe(1);
    expect(show.stdout).toContain("not approved");
    const sha = /sha256 ([0-9a-f]{64})/.exec(show.stdout)![1]!;
    expect(cli("checks", "approve", repo, "--sha", "0".repeat(64)).status).toBe(1);
    const ok = cli("checks", "approve", repo, "--sha", sha);
    expect(ok.status, ok.stderr).toBe(0);
    expect(cli("checks", "show", repo).stdout).toContain("(approved)");

    const r = await m.callOk(
      "fan_out",
      {
        cwd: repo,
        prompt: "FAKE_BASH:echo good > app.txt",
        n: 1,
        permission_mode: "dontAsk",
        trust_workspace: true,
        timeout_ms: 60_000,
      },
      { timeout: 120_000 },
    );
    expect(r.checks_source).toBe("repo");
    expect(r.attempts[0]).toMatchObject({ outcome: "completed", checks_passed: 1, checks_total: 1 });

    // A changed file (a new commit) is refused until approved again.
    checks(["true"]);
    git(repo, "commit", "-qam", "other checks");
    const again = await m.call("fan_out", { cwd: repo, prompt: "hi", n: 1, trust_workspace: true });
    expect(again.error?.code).toBe("PERMISSION_DENIED");
    expect(again.error?.message).toContain("changed since the operator approved it");
  });

  it("claude-sessions fan-out prints the ranked table", () => {
    const repo = w.dir("cli-fan");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    const r = cli(
      "fan-out",
      repo,
      "FAKE_BASH:echo",
      "good",
      ">",
      "app.txt",
      "--n",
      "2",
      "--permission-mode",
      "dontAsk",
      "--trust-workspace",
      "--timeout",
      "60000",
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("| rank | session |");
    expect(r.stdout.match(/^\| [12] \| /gm)).toHaveLength(2);
    expect(r.stdout).toContain("(checks: none)");
    // claude-sessions merge: the first attempt into main (its sessions ended with the fan-out command; the worktree stays).
    const id = /^\| 1 \| ([a-z0-9]+) \|/m.exec(r.stdout)![1]!;
    const mg = cli("merge", id);
    expect(mg.status, mg.stderr).toBe(0);
    expect(mg.stdout).toMatch(/^merged \S+ into main \(merge\)/);
    expect(readFileSync(join(repo, "app.txt"), "utf8")).toBe("good\n");
    const again = cli("merge", id);
    expect(again.status).toBe(1);
    expect(again.stdout).toContain("not merged: nothing to merge");
  });
});

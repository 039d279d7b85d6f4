/**
 * merge_worktree and the merge queue (issue 34) with real git, the fake claude (headless) and the operator's checks:
 * the winner of a fan-out merged; a merge that conflicts is a result listing the files and the target does not move;
 * three merges asked at once are applied one after the other, each checked on its merged result; a merge whose result
 * fails a check leaves the target where it was; bad input changes nothing.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, type Mcp, type World } from "../helpers/harness.js";

describe("merge_worktree (headless, fake claude, real git)", () => {
  let w: World;
  let m: Mcp;
  let repo: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const head = () => git(repo, "rev-parse", "main").trim();
  const scratchLeft = () => readdirSync(join(w.stateDir, "worktrees")).filter((f) => f.startsWith("merge-"));
  /** A session in its own worktree of the repo that ran one shell command and is idle. */
  const session = async (command: string) => {
    const s = await m.callOk("start_session", {
      cwd: repo,
      worktree: true,
      prompt: `FAKE_BASH:${command}`,
      permission_mode: "dontAsk",
      trust_workspace: true,
      backend: "headless",
    });
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 30_000 });
    return s.session_id;
  };

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    const checks = join(w.root, "checks.json");
    // No file of the tree may hold the line "bad".
    writeFileSync(
      checks,
      JSON.stringify({
        checks: [{ name: "no-bad", argv: ["sh", "-c", "! grep -rqx --exclude-dir=.git bad ."], timeout_ms: 10_000 }],
      }),
    );
    m = await connect(w, { CLAUDE_SESSIONS_CHECKS: checks });
    repo = w.dir("repo");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("the fan-out's winner is merged; a conflicting attempt is a result listing the files, the target unchanged", async () => {
    const marker = join(w.root, "claim");
    const fan = await m.callOk(
      "fan_out",
      {
        cwd: repo,
        prompt: `FAKE_BASH:if mkdir ${marker} 2>/dev/null; then echo bad > app.txt; else echo good > app.txt; fi`,
        n: 3,
        permission_mode: "dontAsk",
        trust_workspace: true,
        timeout_ms: 60_000,
      },
      { timeout: 120_000 },
    );
    const [first, , last] = fan.attempts;
    expect(last!.checks_passed).toBe(0);
    const base = head();

    const won = await m.callOk("merge_worktree", { session_id: first!.session_id });
    expect(won).toMatchObject({ merged: true, target: "main", strategy: "merge", target_before: base });
    expect(won.committed).toMatch(/^[0-9a-f]{40}$/);
    expect(won.checks).toEqual([expect.objectContaining({ name: "no-bad", passed: true })]);
    expect(head()).toBe(won.target_after);
    // main is checked out in the repository: its files moved with it, and it stays clean.
    expect(readFileSync(join(repo, "app.txt"), "utf8")).toBe("good\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(git(repo, "log", "-1", "--format=%s", first!.branch)).toContain(first!.session_id);

    // A merge driver of the repository's configuration never runs (git.ts overrides it to `false`: a conflict).
    const sentinel = join(w.root, "pwned-merge-driver");
    git(repo, "config", "merge.evil.driver", `touch ${sentinel}`);
    writeFileSync(join(repo, ".git", "info", "attributes"), "* merge=evil\n");
    const before = head();
    const clash = await m.callOk("merge_worktree", { session_id: last!.session_id });
    expect(existsSync(sentinel)).toBe(false);
    expect(clash).toMatchObject({ merged: false, conflicts: ["app.txt"], target_before: before, target_after: before });
    expect(head()).toBe(before);
    expect(readFileSync(join(repo, "app.txt"), "utf8")).toBe("good\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(scratchLeft()).toEqual([]);
  });

  it("three merges asked at once go one at a time, each checked on its merged result", async () => {
    const ids = await Promise.all(["x1", "x2", "x3"].map((f) => session(`echo ${f} > ${f}.txt`)));
    const start = head();
    const results = await Promise.all(ids.map((id) => m.callOk("merge_worktree", { session_id: id, strategy: "squash" })));
    for (const r of results) {
      expect(r.merged).toBe(true);
      expect(r.checks).toEqual([expect.objectContaining({ name: "no-bad", passed: true })]);
    }
    // A chain: each merge started from where the one before it left the target.
    const byBefore = new Map(results.map((r) => [r.target_before, r]));
    let at = start;
    for (let i = 0; i < 3; i++) at = byBefore.get(at)!.target_after;
    expect(at).toBe(head());
    expect(git(repo, "rev-list", "--count", `${start}..main`).trim()).toBe("3");
    for (const f of ["x1", "x2", "x3"]) expect(readFileSync(join(repo, `${f}.txt`), "utf8")).toBe(`${f}\n`);
    expect(results.some((r) => r.queued_ms > 0)).toBe(true);
  });

  it("a merge whose result fails a check leaves the target where it was", async () => {
    const id = await session("echo bad > other.txt");
    const before = head();
    const r = await m.callOk("merge_worktree", { session_id: id, strategy: "rebase" });
    expect(r.merged).toBe(false);
    expect(r.reason).toContain("a check failed");
    expect(r.checks?.[0]).toMatchObject({ name: "no-bad", passed: false });
    expect(head()).toBe(before);
    expect(existsSync(join(repo, "other.txt"))).toBe(false);
    expect(scratchLeft()).toEqual([]);
  });

  it("bad input changes nothing", async () => {
    const id = await session("echo y > y.txt");
    const before = head();
    const e1 = await m.call("merge_worktree", { session_id: id, target: "no-such-branch" });
    expect(e1.error?.code).toBe("INVALID_ARGUMENT");
    expect(e1.error?.message).toContain("not a branch");
    const e2 = await m.call("merge_worktree", { session_id: id, target: "--output=/tmp/x" });
    expect(e2.error?.code).toBe("INVALID_ARGUMENT");
    const e3 = await m.call("merge_worktree", { session_id: "nosuchsession" });
    expect(e3.error?.code).toBe("SESSION_NOT_FOUND");
    const plain = await m.callOk("start_session", { cwd: w.dir("plain"), backend: "headless", trust_workspace: true });
    const e4 = await m.call("merge_worktree", { session_id: plain.session_id });
    expect(e4.error?.code).toBe("INVALID_ARGUMENT");
    // A session mid-turn: its changes are not finished.
    await m.callOk("send_message", { session_id: id, message: "FAKE_SLOW:3000", wait_for_response: false });
    const busy = await m.call("merge_worktree", { session_id: id });
    expect(busy.error?.code).toBe("SESSION_BUSY");
    await m.callOk("wait_for_completion", { session_id: id, timeout_ms: 30_000 });
    // A dirty checkout of the target is refused before the session's changes are committed.
    writeFileSync(join(repo, "app.txt"), "local edit\n");
    const e5 = await m.call("merge_worktree", { session_id: id });
    expect(e5.error?.code).toBe("INVALID_ARGUMENT");
    expect(e5.error?.message).toContain("uncommitted changes");
    git(repo, "checkout", "--", "app.txt");
    expect(head()).toBe(before);
    const wt = (await m.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)!;
    expect(wt.dirty).toBe(true);
  });
});

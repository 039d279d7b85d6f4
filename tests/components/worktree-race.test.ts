/**
 * A fan-out starts its sessions at once, each with a worktree of one repository: git's `worktree add` of one
 * repository is not safe to run concurrently ("failed to read .git/worktrees/…/commondir"), so the server runs them
 * one at a time per repository (util/keyed-queue.ts). Real git, eight adds and removes at once.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { makeWorktree, planWorktree, removeWorktree } from "../../src/sessions/launch/worktree.js";

const root = mkdtempSync(join(tmpdir(), "cs-wt-race-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("worktrees of one repository made at once", () => {
  it("eight adds at once all succeed, and eight removes", async () => {
    const repo = join(root, "repo");
    mkdirSync(repo);
    const git = (...a: string[]) => execFileSync("git", a, { cwd: repo, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), "a\n");
    git("add", "a.txt");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first");
    const cfg = loadConfig({ CLAUDE_SESSIONS_DIR: join(root, "state") });
    const ids = Array.from({ length: 8 }, (_, i) => `race${i}`);
    const plans = await Promise.all(ids.map((id) => planWorktree(cfg, id, repo, { worktree: true })));
    const made = await Promise.all(plans.map((p, i) => makeWorktree(p, {}, join(root, `setup-${i}.log`))));
    for (const w of made) expect(existsSync(join(w.path, "a.txt"))).toBe(true);
    await Promise.all(made.map((w) => removeWorktree(w, { force: false, deleteBranch: true })));
    for (const w of made) expect(existsSync(w.path)).toBe(false);
  });
});

/**
 * The page's review of a worktree session (read-only): the files changed since the branch left its base (committed,
 * uncommitted and untracked), the diff, and how far the branch is ahead of and behind its base. Every git call goes
 * through util/git.ts (no hooks, filters, external diffs or pagers of the repository run); the diff is capped.
 * An internal route, not a tool: this machine's sessions only (a node's worktree is on its machine).
 */
import { SessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import { git } from "../../util/git.js";

const MAX_DIFF = 512 * 1024;
const MAX_LINES = 50_000;

export interface Review {
  session_id: string;
  path: string;
  branch: string;
  base: string;
  merge_base: string;
  ahead: number;
  behind: number;
  files: Array<{ status: string; path: string }>;
  untracked: string[];
  diff: string;
  truncated: boolean;
}

async function ok(cwd: string, args: string[]): Promise<string> {
  const r = await git(cwd, args);
  if (r.code !== 0)
    throw new SessionError("PROCESS_ERROR", `git ${args[0]} failed in ${cwd}: ${r.stderr.trim().slice(0, 500)}`, {
      suggestion: "Is the worktree still there? kill_session with remove_worktree may have removed it.",
    });
  return r.stdout;
}

export async function reviewWorktree(svc: SessionService, id: string): Promise<Review> {
  const r = await svc.deps.store.get(id);
  if (!r) throw new SessionError("SESSION_NOT_FOUND", `no session ${JSON.stringify(id)} on this machine.`);
  const wt = r.worktree;
  if (!wt)
    throw new SessionError("INVALID_ARGUMENT", `session ${id} does not run in a worktree of its own.`, {
      suggestion: "Sessions started with worktree: true (the start form's checkbox) can be reviewed.",
    });
  const base = wt.base_commit ?? wt.base;
  if (base.startsWith("-") || wt.base.startsWith("-"))
    throw new SessionError("INTERNAL", `session ${id} has a base that looks like an option.`);
  const mergeBase = (await ok(wt.path, ["merge-base", base, "HEAD"])).trim();
  // Ahead: commits of the branch not in its base; behind: commits the base ref gained since (its current tip).
  const [behind, ahead] = (
    await ok(wt.path, ["rev-list", "--left-right", "--count", `${wt.base}...HEAD`]).catch(() =>
      ok(wt.path, ["rev-list", "--left-right", "--count", `${base}...HEAD`]),
    )
  )
    .trim()
    .split(/\s+/)
    .map(Number);
  const names = (await ok(wt.path, ["diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", mergeBase, "--"])).split(
    "\0",
  );
  const files: Review["files"] = [];
  for (let i = 0; i < names.length - 1;) {
    const status = names[i]!;
    // Renames and copies carry two paths.
    const two = /^[RC]/.test(status);
    files.push({ status: status.slice(0, 1), path: two ? `${names[i + 1]} → ${names[i + 2]}` : names[i + 1]! });
    i += two ? 3 : 2;
  }
  const untracked = (await ok(wt.path, ["ls-files", "--others", "--exclude-standard", "-z"])).split("\0").filter(Boolean);
  // The diff is read only when it is of a readable size (a generated file of millions of lines is listed, not read).
  const lines = (await ok(wt.path, ["diff", "--no-ext-diff", "--no-textconv", "--numstat", mergeBase, "--"]))
    .split("\n")
    .reduce((n, l) => n + (Number(l.split("\t")[0]) || 0) + (Number(l.split("\t")[1]) || 0), 0);
  const full =
    lines <= MAX_LINES ? await ok(wt.path, ["diff", "--no-ext-diff", "--no-textconv", "--no-color", mergeBase, "--"]) : "";
  return {
    session_id: id,
    path: wt.path,
    branch: wt.branch,
    base: wt.base,
    merge_base: mergeBase,
    ahead: ahead ?? 0,
    behind: behind ?? 0,
    files,
    untracked,
    diff: full.length > MAX_DIFF ? full.slice(0, MAX_DIFF) : full,
    truncated: full.length > MAX_DIFF || lines > MAX_LINES,
  };
}

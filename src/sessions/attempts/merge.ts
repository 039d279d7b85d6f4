/**
 * merge_worktree (issue 34): lands what one session changed in a target branch (default: the branch its worktree
 * started from). In the merge queue, one at a time: the session's uncommitted changes are committed on its own
 * branch (a message naming the session); the merge (merge, squash or rebase) is made in a scratch worktree on a
 * detached HEAD at the target, so a conflict is found without touching the target (a result listing the files;
 * nothing changes); the operator's checks (as of the target's commit) run on the merged result there; only when
 * they pass does the target move: a compare-and-swap of its ref, or a fast-forward of the worktree that has it
 * checked out (which must be clean).
 */
import { oneAtATime } from "../../util/keyed-queue.js";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { CheckResult, MergeInput, MergeOutput } from "../../api/index.js";
import type { Config } from "../../config.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { SessionRecord } from "../../store/schema.js";
import { git } from "../../util/git.js";
import { briefText } from "../../util/terminal-text.js";
import { isDirty } from "../launch/worktree.js";
import { loadChecks } from "./checks-file.js";
import { inMergeQueue } from "./merge-queue.js";
import { checkBox } from "./check-box.js";
import { runChecks } from "./run-checks.js";

type Strategy = MergeInput["strategy"];
/** Statuses of a session whose changes are still being made (its turn is under way, or it is starting). */
const MID_TURN: ReadonlySet<string> = new Set(["starting", "busy", "waiting_for_permission", "blocked"]);
const IDENTITY = ["-c", "user.name=claude-sessions", "-c", "user.email=claude-sessions@localhost"];

async function ok(cwd: string, args: string[], what: string, timeoutMs = 120_000): Promise<string> {
  const r = await git(cwd, args, timeoutMs);
  if (r.code !== 0) throw new SessionError("PROCESS_ERROR", `${what} failed: ${briefText(r.stderr || r.stdout)}`);
  return r.stdout.trim();
}

/** `-c user.*` when the repository names nobody (a commit needs an identity). */
async function identity(cwd: string): Promise<string[]> {
  const r = await git(cwd, ["config", "user.email"]);
  return r.code === 0 && r.stdout.trim() ? [] : IDENTITY;
}

/** The worktree that has `branch` checked out, if any. */
async function checkedOutAt(repo: string, branch: string): Promise<string | undefined> {
  const list = await ok(repo, ["worktree", "list", "--porcelain"], "git worktree list");
  let path: string | undefined;
  for (const l of list.split("\n")) {
    if (l.startsWith("worktree ")) path = l.slice(9);
    else if (l === `branch refs/heads/${branch}`) return path;
  }
  return undefined;
}

async function checkTarget(repo: string, target: string): Promise<string> {
  const fmt = target.startsWith("-") ? undefined : await git(repo, ["check-ref-format", "--branch", target]);
  const tip = fmt?.code === 0 ? await git(repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${target}`]) : undefined;
  if (!tip || tip.code !== 0) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `target ${JSON.stringify(target)} is not a branch of ${repo}; nothing was changed.`,
      { suggestion: "Name an existing branch (git branch lists them)." },
    );
  }
  return tip.stdout.trim();
}

export interface MergeSession {
  record: SessionRecord;
  /** Its status now (a busy session is refused: its changes are still being made). */
  status: string;
}

export async function mergeWorktree(cfg: Config, s: MergeSession, input: MergeInput, ctx: CallContext): Promise<MergeOutput> {
  const r = s.record;
  const wt = r.worktree;
  if (!wt)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `session ${r.session_id} does not run in a worktree of its own; nothing was changed.`,
      { suggestion: "Sessions started with worktree: true (or by fan_out) can be merged." },
    );
  if (MID_TURN.has(s.status))
    throw new SessionError(
      "SESSION_BUSY",
      `session ${r.session_id} is ${s.status}: its changes are not finished; nothing was changed.`,
      { suggestion: "wait_for_completion first, then merge." },
    );
  const target = input.target ?? wt.base;
  const strategy: Strategy = input.strategy ?? "merge";
  // Refused before anything: an unknown target, a dirty checkout of it, an unapproved checks file.
  const before0 = await checkTarget(wt.repo, target);
  await loadChecks(cfg, wt.repo, before0);
  await assertCleanCheckout(wt.repo, target);
  const { value, queuedMs } = await inMergeQueue(
    cfg.stateDir,
    () => mergeNow(cfg, r.session_id, wt, target, strategy, r.sandbox !== undefined),
    ctx.signal,
  );
  return { ...value, queued_ms: queuedMs };
}

async function assertCleanCheckout(repo: string, target: string): Promise<string | undefined> {
  const at = await checkedOutAt(repo, target);
  if (at && (await isDirty(at)) !== false) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${target} is checked out in ${at}, which has uncommitted changes; nothing was changed.`,
      { suggestion: "Commit or stash them there, then merge again." },
    );
  }
  return at;
}

type Worktree = NonNullable<SessionRecord["worktree"]>;

async function mergeNow(
  cfg: Config,
  id: string,
  wt: Worktree,
  target: string,
  strategy: Strategy,
  sandboxed: boolean,
): Promise<Omit<MergeOutput, "queued_ms">> {
  const repo = wt.repo;
  // Read again inside the queue: an earlier merge may have moved the target.
  const before = await checkTarget(repo, target);
  const checks = await loadChecks(cfg, repo, before);
  const base = { session_id: id, target, strategy, target_before: before, target_after: before };

  // 1. The session's uncommitted changes, committed on its branch.
  let committed: string | undefined;
  if ((await isDirty(wt.path)) !== false) {
    await ok(wt.path, ["add", "-A"], "git add");
    await ok(
      wt.path,
      [...(await identity(wt.path)), "commit", "--no-verify", "-q", "-m", `claude-sessions: the changes of session ${id}`],
      "committing the session's changes",
    );
    committed = await ok(wt.path, ["rev-parse", "HEAD"], "git rev-parse");
  }
  const tip = await ok(repo, ["rev-parse", "--verify", `refs/heads/${wt.branch}^{commit}`], "reading the session's branch");
  const extra = committed ? { committed } : {};
  if ((await git(repo, ["merge-base", "--is-ancestor", tip, before])).code === 0) {
    return { ...base, ...extra, merged: false, reason: `nothing to merge: ${wt.branch} is already in ${target}.` };
  }

  // 2. The merge in a scratch worktree, detached at the target.
  const scratch = join(cfg.stateDir, "worktrees", `merge-${randomBytes(6).toString("hex")}`);
  await mkdir(join(cfg.stateDir, "worktrees"), { recursive: true, mode: 0o700 });
  await oneAtATime(`worktrees:${repo}`, () =>
    ok(repo, ["worktree", "add", "--no-checkout", "--detach", "--end-of-options", scratch, before], "git worktree add (scratch)"),
  );
  try {
    await ok(scratch, ["reset", "--hard", "--quiet"], "checking out the scratch worktree");
    const who = await identity(scratch);
    const conflicts = await applyIn(scratch, who, strategy, id, wt.branch, tip, before, target);
    if (conflicts)
      return {
        ...base,
        ...extra,
        merged: false,
        conflicts,
        reason: `the merge conflicts in ${conflicts.length} file(s); nothing was changed.`,
      };
    const result = await ok(scratch, ["rev-parse", "HEAD"], "git rev-parse");

    // 3. The checks on the merged result.
    let ran: CheckResult[] | undefined;
    if (checks.checks.length) {
      // A sandboxed session's code is checked in the box, as in its fan-out.
      ran = await runChecks(
        checks.checks,
        scratch,
        join(cfg.stateDir, "checks", `merge-${id}.log`),
        sandboxed ? await checkBox(cfg, scratch) : undefined,
      );
      if (ran.some((c) => !c.passed))
        return {
          ...base,
          ...extra,
          merged: false,
          checks: ran,
          reason: `a check failed on the merged result (${ran
            .filter((c) => !c.passed)
            .map((c) => c.name)
            .join(", ")}); ${target} was not moved.`,
        };
    }

    // 4. The target moves: a fast-forward where it is checked out, else a compare-and-swap of its ref.
    const at = await assertCleanCheckout(repo, target);
    if (at) await ok(at, ["merge", "--ff-only", "-q", result], `fast-forwarding ${target} in ${at}`);
    else
      await ok(
        repo,
        ["update-ref", "-m", `claude-sessions: merge of session ${id}`, `refs/heads/${target}`, result, before],
        `moving ${target}`,
      );
    return { ...base, ...extra, merged: true, target_after: result, ...(ran ? { checks: ran } : {}) };
  } finally {
    const rr = await oneAtATime(`worktrees:${repo}`, () =>
      git(repo, ["worktree", "remove", "--force", "--end-of-options", scratch]),
    ).catch(() => undefined);
    if (rr?.code !== 0) {
      await rm(scratch, { recursive: true, force: true });
      await git(repo, ["worktree", "prune"]).catch(() => {});
    }
  }
}

async function unmerged(cwd: string): Promise<string[]> {
  const r = await git(cwd, ["diff", "--name-only", "--diff-filter=U", "-z"]);
  return r.stdout.split("\0").filter(Boolean);
}

/** Applies the session's branch in the scratch worktree; the conflicting files, or undefined when it applied. */
async function applyIn(
  scratch: string,
  who: string[],
  strategy: Strategy,
  id: string,
  branch: string,
  tip: string,
  before: string,
  target: string,
): Promise<string[] | undefined> {
  const message = `${strategy === "squash" ? "Squash" : "Merge"} of session ${id} (${branch}) into ${target}`;
  if (strategy === "rebase") {
    const merges = await ok(scratch, ["rev-list", "--merges", `${before}..${tip}`], "git rev-list");
    if (merges)
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${branch} holds merge commits, which rebase does not replay here; nothing was changed.`,
        { suggestion: 'Use strategy "merge" or "squash".' },
      );
    const r = await git(
      scratch,
      [...who, "cherry-pick", "--allow-empty", "--keep-redundant-commits", `${before}..${tip}`],
      300_000,
    );
    if (r.code === 0) return undefined;
    const files = await unmerged(scratch);
    await git(scratch, ["cherry-pick", "--abort"]);
    return files.length ? files : failed("cherry-pick", r.stderr);
  }
  const r = await git(
    scratch,
    [...who, "merge", "--no-edit", ...(strategy === "squash" ? ["--squash"] : ["-m", message]), tip],
    300_000,
  );
  if (r.code !== 0) {
    const files = await unmerged(scratch);
    await git(scratch, ["merge", "--abort"]);
    return files.length ? files : failed("merge", r.stderr || r.stdout);
  }
  if (strategy === "squash") await ok(scratch, [...who, "commit", "--no-verify", "-q", "-m", message], "committing the squash");
  return undefined;
}

function failed(what: string, stderr: string): never {
  throw new SessionError("PROCESS_ERROR", `git ${what} failed: ${briefText(stderr)}; nothing was changed.`);
}

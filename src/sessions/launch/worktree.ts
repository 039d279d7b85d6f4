/**
 * A git worktree per session (start_session {worktree, copy_files, setup_command}): a new branch from a base, made
 * under <state>/worktrees/<id>, untracked files copied in, a setup command run once; all of it undone when a step
 * fails. git runs through util/git.ts (argv arrays; the repository's hooks, fsmonitor, filter drivers, external
 * diff and textconv switched off): a repository's own configuration runs nothing as the server.
 */
import { constants } from "node:fs";
import { appendFile, lstat, mkdir, open, readFile, realpath, rm, stat, unlink } from "node:fs/promises";
import { dirname, isAbsolute, join, relative } from "node:path";
import type { StartInput } from "../../api/index.js";
import type { Config } from "../../config.js";
import { SessionError } from "../../core/errors.js";
import { briefText } from "../../util/terminal-text.js";
import type { SessionRecord } from "../../store/schema.js";
import { run, type RunResult } from "../../util/proc/exec.js";
import { git } from "../../util/git.js";
import { checkSetupCommand } from "../gates.js";
import { isWithin } from "../../util/fs/paths.js";
import { oneAtATime } from "../../util/keyed-queue.js";

export type WorktreeInfo = NonNullable<SessionRecord["worktree"]>;
/** How long setup_command may run. */
const SETUP_TIMEOUT_MS = 10 * 60_000;

async function gitOk(cwd: string, args: string[], what: string): Promise<string> {
  const r = await git(cwd, args).catch((e: unknown) => {
    throw new SessionError("PROCESS_ERROR", `git could not run (${String(e)}).`, {
      suggestion: "Install git, or start the session without worktree.",
    });
  });
  if (r.code !== 0) throw new SessionError("PROCESS_ERROR", `${what} failed: ${briefText(r.stderr || r.stdout)}`);
  return r.stdout.trim();
}

/** The repository top of `cwd`, or INVALID_ARGUMENT. */
export async function repoTop(cwd: string): Promise<string> {
  const r = await git(cwd, ["rev-parse", "--show-toplevel"]).catch(() => undefined);
  if (!r || r.code !== 0 || !r.stdout.trim()) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `cwd ${JSON.stringify(cwd)} is not in a git repository, so it cannot have a worktree.`,
      {
        suggestion: "Run git init there first, or start the session without worktree.",
      },
    );
  }
  return r.stdout.trim();
}

export interface WorktreePlan {
  top: string;
  branch: string;
  base: string;
  baseCommit: string;
  path: string;
  /** The session's cwd inside the new worktree (the same place relative to the repository as the caller's cwd). */
  cwd: string;
  copies: string[];
  setup?: { file: string; args: string[]; shown: string };
}

/** Checks everything before anything is made: the repository, the branch and base, the files, the setup command. */
export async function planWorktree(
  cfg: Config,
  id: string,
  cwd: string,
  input: Pick<StartInput, "worktree" | "copy_files" | "setup_command">,
): Promise<WorktreePlan> {
  // Every form needs the operator (gates.ts): the program, resolved, in CLAUDE_SESSIONS_SETUP_COMMANDS. First: nothing runs before it.
  const setup = input.setup_command !== undefined ? checkSetupCommand(cfg, input.setup_command) : undefined;
  const top = await realpath(await repoTop(cwd));
  const o = typeof input.worktree === "object" ? input.worktree : {};
  const branch = o.branch ?? `cs/${id}`;
  const base = o.base ?? ((await gitOk(top, ["rev-parse", "--abbrev-ref", "HEAD"], "reading HEAD")) || "HEAD");
  const check = await git(top, ["check-ref-format", "--branch", branch]);
  if (check.code !== 0)
    throw new SessionError("INVALID_ARGUMENT", `worktree.branch ${JSON.stringify(branch)} is not a valid branch name.`);
  if ((await git(top, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`])).code === 0) {
    throw new SessionError("INVALID_ARGUMENT", `branch ${JSON.stringify(branch)} already exists in ${top}.`, {
      suggestion: "Choose another worktree.branch (or leave it out).",
    });
  }
  const baseRes = await git(top, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${base}^{commit}`]);
  if (baseRes.code !== 0)
    throw new SessionError("INVALID_ARGUMENT", `worktree.base ${JSON.stringify(base)} is not a commit of ${top}.`);
  const copies: string[] = [];
  for (const f of input.copy_files ?? []) {
    if (isAbsolute(f) || f.split(/[\\/]/).includes("..") || f.includes("\0"))
      throw new SessionError(
        "INVALID_ARGUMENT",
        `copy_files: ${JSON.stringify(f)} must be a path inside the repository, relative to its top.`,
      );
    const real = await realpath(join(top, f)).catch(() => undefined);
    const st = real ? await stat(real) : undefined;
    if (!real || !st?.isFile() || !isWithin(real, top)) {
      throw new SessionError("INVALID_ARGUMENT", `copy_files: ${JSON.stringify(f)} is not a file inside ${top}.`);
    }
    copies.push(f);
  }
  const path = join(cfg.stateDir, "worktrees", id);
  const rel = relative(top, await realpath(cwd));
  const plan: WorktreePlan = {
    top,
    branch,
    base,
    baseCommit: baseRes.stdout.trim(),
    path,
    cwd: rel ? join(path, rel) : path,
    copies,
  };
  if (setup) plan.setup = setup;
  return plan;
}

/**
 * Makes the worktree, copies the files, runs the setup command (its output appended to `logPath`). On any failure
 * it removes what it made (worktree, branch) and throws: PROCESS_ERROR with the setup command's output.
 */
export async function makeWorktree(plan: WorktreePlan, env: Record<string, string>, logPath: string): Promise<WorktreeInfo> {
  const info: WorktreeInfo = {
    path: plan.path,
    branch: plan.branch,
    base: plan.base,
    base_commit: plan.baseCommit,
    repo: plan.top,
  };
  await mkdir(dirname(plan.path), { recursive: true, mode: 0o700 });
  // No checkout by `worktree add`: the files are checked out by a second call in the new worktree, whose filter
  // drivers (includeIf onbranch: the new branch) util/git.ts reads and switches off there.
  await oneAtATime(`worktrees:${plan.top}`, () =>
    gitOk(
      plan.top,
      ["worktree", "add", "--no-checkout", "-b", plan.branch, "--end-of-options", plan.path, plan.baseCommit],
      "git worktree add",
    ),
  );
  try {
    await gitOk(plan.path, ["reset", "--hard", "--quiet"], "checking out the worktree");
    for (const f of plan.copies) await copyInto(plan, f);
    if (plan.setup) {
      await mkdir(dirname(logPath), { recursive: true, mode: 0o700 });
      const r = await run(plan.setup.file, plan.setup.args, { cwd: plan.cwd, env, timeoutMs: SETUP_TIMEOUT_MS }).catch(
        (e: unknown) => ({ code: null, signal: null, stdout: "", stderr: String(e) }) satisfies RunResult,
      );
      const output = r.stdout + r.stderr;
      await appendFile(
        logPath,
        `$ ${plan.setup.shown}\n${output}${output.endsWith("\n") || !output ? "" : "\n"}[setup exited ${r.code ?? r.signal}]\n`,
        { mode: 0o600 },
      );
      if (r.code !== 0) {
        throw new SessionError(
          "PROCESS_ERROR",
          `setup_command failed (exit ${r.code ?? r.signal}): ${briefText(output, 2000, 30) || "(no output)"}`,
          {
            suggestion: "Fix the command (it runs in the new worktree before Claude starts); nothing was left behind.",
            details: { exit_code: r.code, output: output.slice(-4000) },
          },
        );
      }
    }
  } catch (e) {
    await removeWorktree(info, { force: true, deleteBranch: true });
    throw e;
  }
  return info;
}

const refuseCopy = (f: string, why: string) =>
  new SessionError(
    "INVALID_ARGUMENT",
    `copy_files: ${JSON.stringify(f)} cannot be copied into the worktree: ${why}; nothing was left behind.`,
    {
      suggestion:
        "Leave that path out of copy_files (a path the base commit tracks as a symbolic link, or through one, is refused).",
    },
  );

/**
 * Copies one of copy_files into the new worktree without ever leaving it: no directory on the way may be a symbolic
 * link (the base commit can check links out), the parent's real path must be inside the worktree, and the file is
 * created exclusively without following a link (a regular file the checkout already has is replaced, a link is
 * refused).
 */
async function copyInto(plan: WorktreePlan, f: string): Promise<void> {
  const root = await realpath(plan.path);
  const parts = f.split(/[\\/]/).filter((p) => p && p !== ".");
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    const st = await lstat(dir).catch(() => undefined);
    if (!st) await mkdir(dir, { mode: 0o755 });
    else if (st.isSymbolicLink()) throw refuseCopy(f, `${relative(root, dir)} is a symbolic link in the checkout`);
    else if (!st.isDirectory()) throw refuseCopy(f, `${relative(root, dir)} is not a directory in the checkout`);
  }
  const parent = await realpath(dir);
  if (!isWithin(parent, root)) throw refuseCopy(f, "its directory is outside the worktree");
  const dest = join(parent, parts.at(-1)!);
  const cur = await lstat(dest).catch(() => undefined);
  if (cur?.isSymbolicLink()) throw refuseCopy(f, "the checkout has it as a symbolic link");
  if (cur && !cur.isFile()) throw refuseCopy(f, "the checkout has something else than a file there");
  if (cur) await unlink(dest);
  const src = join(plan.top, f);
  const mode = (await stat(src)).mode & 0o777;
  const fh = await open(dest, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode).catch(
    (e: NodeJS.ErrnoException) => {
      throw refuseCopy(f, e.code === "EEXIST" || e.code === "ELOOP" ? "something appeared at that path" : e.message);
    },
  );
  try {
    await fh.writeFile(await readFile(src));
  } finally {
    await fh.close();
  }
}

/** Uncommitted changes (untracked files included) in a worktree; undefined when git cannot tell. */
export async function isDirty(path: string): Promise<boolean | undefined> {
  const r = await git(path, ["status", "--porcelain", "--ignore-submodules=all"]).catch(() => undefined);
  return r && r.code === 0 ? r.stdout.trim().length > 0 : undefined;
}

/** Removes a session's worktree (and, when the start failed, the branch made for it). */
export async function removeWorktree(w: WorktreeInfo, o: { force: boolean; deleteBranch?: boolean }): Promise<void> {
  const r = await oneAtATime(`worktrees:${w.repo}`, () =>
    git(w.repo, ["worktree", "remove", ...(o.force ? ["--force"] : []), "--end-of-options", w.path]),
  ).catch(() => undefined);
  if (r?.code !== 0) {
    if (!o.force)
      throw new SessionError("PROCESS_ERROR", `git worktree remove failed: ${briefText(r?.stderr ?? "git could not run")}`);
    await rm(w.path, { recursive: true, force: true });
    await git(w.repo, ["worktree", "prune"]).catch(() => {});
  }
  if (o.deleteBranch) await git(w.repo, ["branch", "-D", "--end-of-options", w.branch]).catch(() => {});
}

/** kill_session {remove_worktree}: refuses (before anything is ended) a worktree with changes, unless force. */
export async function assertRemovable(r: SessionRecord, force: boolean): Promise<void> {
  if (!r.worktree) throw new SessionError("INVALID_ARGUMENT", `session ${r.session_id} has no worktree made by this server.`);
  if (force) return;
  const dirty = await isDirty(r.worktree.path);
  if (dirty !== false) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the worktree of session ${r.session_id} (${r.worktree.path}, branch ${r.worktree.branch}) has uncommitted changes; nothing was ended or removed.`,
      {
        suggestion: "Commit or discard the changes, kill without remove_worktree, or pass force: true to remove it anyway.",
      },
    );
  }
}

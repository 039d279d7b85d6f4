/**
 * A git worktree per session (start_session {worktree, copy_files, setup_command}): a new branch from a base, made
 * under <state>/worktrees/<id>, untracked files copied in, a setup command run once; all of it undone when a step
 * fails. git runs with argv arrays (util/exec.ts), with the repository's hooks and fsmonitor switched off: a
 * repository's own configuration runs nothing of the server's.
 */
import { appendFile, copyFile, mkdir, realpath, rm, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import type { StartInput } from "../api/index.js";
import type { Config } from "../config.js";
import { SessionError } from "../core/errors.js";
import { briefText } from "../drivers/terminal/screens.js";
import type { SessionRecord } from "../store/schema.js";
import { run, type RunResult } from "../util/exec.js";
import { checkSetupCommand } from "./gates.js";

export type WorktreeInfo = NonNullable<SessionRecord["worktree"]>;
/** How long setup_command may run. */
const SETUP_TIMEOUT_MS = 10 * 60_000;

const GIT_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"];

/** git with argv only, no prompts, no optional locks (a read never blocks the session's own git). */
export function git(cwd: string, args: string[], timeoutMs = 30_000): Promise<RunResult> {
  return run("git", [...GIT_SAFE, ...args], { cwd, timeoutMs, env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" } });
}

async function gitOk(cwd: string, args: string[], what: string): Promise<string> {
  const r = await git(cwd, args).catch((e: unknown) => {
    throw new SessionError("PROCESS_ERROR", `git could not run (${String(e)}).`, { suggestion: "Install git, or start the session without worktree." });
  });
  if (r.code !== 0) throw new SessionError("PROCESS_ERROR", `${what} failed: ${briefText(r.stderr || r.stdout)}`);
  return r.stdout.trim();
}

/** The repository top of `cwd`, or INVALID_ARGUMENT. */
export async function repoTop(cwd: string): Promise<string> {
  const r = await git(cwd, ["rev-parse", "--show-toplevel"]).catch(() => undefined);
  if (!r || r.code !== 0 || !r.stdout.trim()) {
    throw new SessionError("INVALID_ARGUMENT", `cwd ${JSON.stringify(cwd)} is not in a git repository, so it cannot have a worktree.`, {
      suggestion: "Run git init there first, or start the session without worktree.",
    });
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
export async function planWorktree(cfg: Config, id: string, cwd: string, input: Pick<StartInput, "worktree" | "copy_files" | "setup_command">): Promise<WorktreePlan> {
  // Every form needs the operator (gates.ts): the program, resolved, in CLAUDE_SESSIONS_SETUP_COMMANDS. First: nothing runs before it.
  const setup = input.setup_command !== undefined ? checkSetupCommand(cfg, input.setup_command) : undefined;
  const top = await realpath(await repoTop(cwd));
  const o = typeof input.worktree === "object" ? input.worktree : {};
  const branch = o.branch ?? `cs/${id}`;
  const base = o.base ?? ((await gitOk(top, ["rev-parse", "--abbrev-ref", "HEAD"], "reading HEAD")) || "HEAD");
  const check = await git(top, ["check-ref-format", "--branch", branch]);
  if (check.code !== 0) throw new SessionError("INVALID_ARGUMENT", `worktree.branch ${JSON.stringify(branch)} is not a valid branch name.`);
  if ((await git(top, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`])).code === 0) {
    throw new SessionError("INVALID_ARGUMENT", `branch ${JSON.stringify(branch)} already exists in ${top}.`, { suggestion: "Choose another worktree.branch (or leave it out)." });
  }
  const baseRes = await git(top, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${base}^{commit}`]);
  if (baseRes.code !== 0) throw new SessionError("INVALID_ARGUMENT", `worktree.base ${JSON.stringify(base)} is not a commit of ${top}.`);
  const copies: string[] = [];
  for (const f of input.copy_files ?? []) {
    if (isAbsolute(f) || f.split(/[\\/]/).includes("..") || f.includes("\0")) throw new SessionError("INVALID_ARGUMENT", `copy_files: ${JSON.stringify(f)} must be a path inside the repository, relative to its top.`);
    const real = await realpath(join(top, f)).catch(() => undefined);
    const st = real ? await stat(real) : undefined;
    if (!real || !st?.isFile() || (real !== top && !real.startsWith(top + sep))) {
      throw new SessionError("INVALID_ARGUMENT", `copy_files: ${JSON.stringify(f)} is not a file inside ${top}.`);
    }
    copies.push(f);
  }
  const path = join(cfg.stateDir, "worktrees", id);
  const rel = relative(top, await realpath(cwd));
  const plan: WorktreePlan = { top, branch, base, baseCommit: baseRes.stdout.trim(), path, cwd: rel ? join(path, rel) : path, copies };
  if (setup) plan.setup = setup;
  return plan;
}

/**
 * Makes the worktree, copies the files, runs the setup command (its output appended to `logPath`). On any failure
 * it removes what it made (worktree, branch) and throws: PROCESS_ERROR with the setup command's output.
 */
export async function makeWorktree(plan: WorktreePlan, env: Record<string, string>, logPath: string): Promise<WorktreeInfo> {
  const info: WorktreeInfo = { path: plan.path, branch: plan.branch, base: plan.base, base_commit: plan.baseCommit, repo: plan.top };
  await mkdir(dirname(plan.path), { recursive: true, mode: 0o700 });
  await gitOk(plan.top, ["worktree", "add", "-b", plan.branch, "--end-of-options", plan.path, plan.baseCommit], "git worktree add");
  try {
    for (const f of plan.copies) {
      await mkdir(dirname(join(plan.path, f)), { recursive: true });
      await copyFile(join(plan.top, f), join(plan.path, f));
    }
    if (plan.setup) {
      await mkdir(dirname(logPath), { recursive: true, mode: 0o700 });
      const r = await run(plan.setup.file, plan.setup.args, { cwd: plan.cwd, env, timeoutMs: SETUP_TIMEOUT_MS }).catch((e: unknown) => ({ code: null, signal: null, stdout: "", stderr: String(e) }) satisfies RunResult);
      const output = r.stdout + r.stderr;
      await appendFile(logPath, `$ ${plan.setup.shown}\n${output}${output.endsWith("\n") || !output ? "" : "\n"}[setup exited ${r.code ?? r.signal}]\n`, { mode: 0o600 });
      if (r.code !== 0) {
        throw new SessionError("PROCESS_ERROR", `setup_command failed (exit ${r.code ?? r.signal}): ${briefText(output, 2000, 30) || "(no output)"}`, {
          suggestion: "Fix the command (it runs in the new worktree before Claude starts); nothing was left behind.",
          details: { exit_code: r.code, output: output.slice(-4000) },
        });
      }
    }
  } catch (e) {
    await removeWorktree(info, { force: true, deleteBranch: true });
    throw e;
  }
  return info;
}

/** Uncommitted changes (untracked files included) in a worktree; undefined when git cannot tell. */
export async function isDirty(path: string): Promise<boolean | undefined> {
  const r = await git(path, ["status", "--porcelain"]).catch(() => undefined);
  return r && r.code === 0 ? r.stdout.trim().length > 0 : undefined;
}

/** Removes a session's worktree (and, when the start failed, the branch made for it). */
export async function removeWorktree(w: WorktreeInfo, o: { force: boolean; deleteBranch?: boolean }): Promise<void> {
  const r = await git(w.repo, ["worktree", "remove", ...(o.force ? ["--force"] : []), "--end-of-options", w.path]).catch(() => undefined);
  if (r?.code !== 0) {
    if (!o.force) throw new SessionError("PROCESS_ERROR", `git worktree remove failed: ${briefText(r?.stderr ?? "git could not run")}`);
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
    throw new SessionError("INVALID_ARGUMENT", `the worktree of session ${r.session_id} (${r.worktree.path}, branch ${r.worktree.branch}) has uncommitted changes; nothing was ended or removed.`, {
      suggestion: "Commit or discard the changes, kill without remove_worktree, or pass force: true to remove it anyway.",
    });
  }
}

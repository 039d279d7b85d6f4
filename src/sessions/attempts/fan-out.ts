/**
 * fan_out (issue 34): one prompt to n sessions (or one per variant: model / permission mode), each in its own git
 * worktree from the same base commit; waits for all of them (hook-driven waits, one progress notification per
 * attempt that ends, one deadline for all); runs the operator's checks in every worktree; returns them ranked.
 * Everything that can be refused is refused before anything is made (not a repository, a dirty base, n over
 * CLAUDE_SESSIONS_MAX_FAN_OUT, an unapproved checks file); a fan-out whose sessions do not all start ends the ones
 * that did and removes every worktree and branch it made.
 */
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import type {
  FanOutInput,
  FanOutOutput,
  KillInput,
  KillOutput,
  StartInput,
  StartOutput,
  WaitInput,
  WaitOutput,
} from "../../api/index.js";
import type { Config } from "../../config.js";
import type { CallContext } from "../../core/context.js";
import { SessionError, toSessionError } from "../../core/errors.js";
import type { BackendKind } from "../../core/events.js";
import { git } from "../../util/git.js";
import { newSessionId } from "../launch/options.js";
import { removeWorktree, repoTop } from "../launch/worktree.js";
import { checkBox } from "./check-box.js";
import { loadChecks } from "./checks-file.js";
import { diffStat } from "./diff.js";
import { rank, table, type Unranked } from "./rank.js";
import { runChecks } from "./run-checks.js";

/** The session layer's doors fan_out goes through (the same checks as the tools'). */
export interface FanOutOps {
  start(input: StartInput, ctx: CallContext): Promise<StartOutput>;
  wait(input: WaitInput, ctx: CallContext): Promise<WaitOutput>;
  kill(input: KillInput): Promise<KillOutput>;
  /** The kind of session a one-call task runs in (run_task's default). */
  taskBackend: BackendKind;
}

export const DEFAULT_FAN_OUT = 3;
const SUMMARY_CHARS = 300;

interface Attempt {
  id: string;
  model?: string | undefined;
  permission_mode?: FanOutInput["permission_mode"];
}

/** The repository, its clean HEAD and the branch it is on (undefined when detached). */
export async function cleanBase(cwd: string): Promise<{ top: string; commit: string; branch: string | undefined }> {
  const top = await realpath(await repoTop(cwd));
  const status = await git(top, ["status", "--porcelain", "--ignore-submodules=all"]);
  if (status.code !== 0)
    throw new SessionError("PROCESS_ERROR", `git status failed in ${top}: ${status.stderr.trim().slice(0, 300)}`);
  if (status.stdout.trim()) {
    const files = status.stdout
      .trim()
      .split("\n")
      .slice(0, 10)
      .map((l) => l.slice(3));
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the base ${top} has uncommitted changes (${files.join(", ")}); the attempts would not see them. Nothing was started.`,
      {
        suggestion: "Commit or stash them first: every attempt starts from the base commit.",
        details: { files },
      },
    );
  }
  const head = await git(top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (head.code !== 0)
    throw new SessionError("INVALID_ARGUMENT", `${top} has no commit yet; nothing was started.`, {
      suggestion: "Make a first commit.",
    });
  const b = await git(top, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  return { top, commit: head.stdout.trim(), branch: b.code === 0 ? b.stdout.trim() : undefined };
}

function attemptsOf(cfg: Config, input: FanOutInput): Attempt[] {
  const n = input.variants?.length ?? input.n ?? DEFAULT_FAN_OUT;
  if (input.variants && input.n !== undefined && input.n !== input.variants.length) {
    throw new SessionError("INVALID_ARGUMENT", `n is ${input.n} but variants has ${input.variants.length} entries.`, {
      suggestion: "Give n or variants (one session per variant), not both.",
    });
  }
  if (n > cfg.maxFanOut) {
    throw new SessionError(
      "LIMIT_REACHED",
      `a fan-out of ${n} is over the operator's limit of ${cfg.maxFanOut} (CLAUDE_SESSIONS_MAX_FAN_OUT); nothing was started.`,
      {
        suggestion: `Ask for at most ${cfg.maxFanOut} sessions.`,
      },
    );
  }
  return Array.from({ length: n }, (_, i) => {
    const v = input.variants?.[i] ?? {};
    return { id: newSessionId(), model: v.model ?? input.model, permission_mode: v.permission_mode ?? input.permission_mode };
  });
}

export async function fanOut(cfg: Config, ops: FanOutOps, input: FanOutInput, ctx: CallContext): Promise<FanOutOutput> {
  const t0 = Date.now();
  const attempts = attemptsOf(cfg, input);
  const base = await cleanBase(input.cwd);
  const checks = await loadChecks(cfg, base.top, base.commit);
  const backend = input.backend ?? ops.taskBackend;
  const progress = (done: number, message: string) => ctx.progress?.({ progress: done, total: attempts.length * 2, message });

  // Start all; if one does not start, undo all (sessions ended, worktrees and branches removed).
  const started = await Promise.allSettled(
    attempts.map((a) =>
      ops.start(
        {
          session_id: a.id,
          cwd: input.cwd,
          prompt: input.prompt,
          backend,
          ...(input.trust_workspace ? { trust_workspace: true } : {}),
          worktree: { base: base.branch ?? base.commit },
          ...(a.model ? { model: a.model } : {}),
          ...(a.permission_mode ? { permission_mode: a.permission_mode } : {}),
        },
        ctx,
      ),
    ),
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await undo(cfg, ops, base.top, attempts, started);
    const e = toSessionError(failed.reason);
    throw new SessionError(
      e.code,
      `fan_out: a session did not start (${e.message}); the fan-out's sessions were ended and their worktrees and branches removed.`,
      { suggestion: e.suggestion, ...(e.details ? { details: e.details } : {}) },
    );
  }
  const outs = started.map((s) => (s as PromiseFulfilledResult<StartOutput>).value);
  // One base commit for all: a branch that moved while the worktrees were made is an undo too.
  const heads = await Promise.all(
    outs.map(async (o) => (o.worktree ? (await git(o.worktree.path, ["rev-parse", "HEAD"])).stdout.trim() : "")),
  );
  if (heads.some((h) => h !== base.commit)) {
    await undo(cfg, ops, base.top, attempts, started);
    throw new SessionError(
      "PROCESS_ERROR",
      `fan_out: ${base.branch ?? "HEAD"} moved while the sessions started, so they would not share one base commit; they ` +
        `were ended and their worktrees and branches removed.`,
      { suggestion: "Try again." },
    );
  }
  progress(0, `${attempts.length} sessions started from ${base.commit.slice(0, 12)}`);

  // Wait for all, under one deadline.
  const deadline = t0 + input.timeout_ms;
  let done = 0;
  const waited = await Promise.all(
    attempts.map(async (a) => {
      const w = await ops.wait({ session_id: a.id, timeout_ms: Math.max(0, deadline - Date.now()), check_idle: false }, ctx).then(
        (r) => ({ r }),
        (e: unknown) => ({ e: toSessionError(e) }),
      );
      const ms = Date.now() - t0;
      progress(
        ++done,
        `${a.id} ${"r" in w ? (w.r.completed ? "completed" : w.r.timed_out ? "timed out" : "ended") : "failed"} (${done}/${attempts.length})`,
      );
      return { w, ms };
    }),
  );

  // Checks and diff in every worktree.
  let checked = 0;
  const results = await Promise.all(
    attempts.map(async (a, i): Promise<Unranked> => {
      const out = outs[i]!;
      const wt = out.worktree!;
      const { w, ms } = waited[i]!;
      const logPath = join(cfg.stateDir, "checks", `${a.id}.log`);
      // A sandboxed session's checks run in a box of their own (no network, the worktree their only writable place).
      const ran = checks.checks.length
        ? await runChecks(checks.checks, wt.path, logPath, out.sandboxed ? await checkBox(cfg, wt.path) : undefined)
        : [];
      const diff = await diffStat(wt.path, base.commit);
      progress(attempts.length + ++checked, `checks of ${a.id}: ${ran.filter((c) => c.passed).length}/${ran.length} passed`);
      const r = "r" in w ? w.r : undefined;
      const outcome = r?.completed && r.final_state !== "error" && !r.error ? "completed" : r?.timed_out ? "timed_out" : "failed";
      const reason =
        "e" in w
          ? `${w.e.code}: ${w.e.message}`
          : outcome === "timed_out"
            ? `no answer within ${input.timeout_ms} ms`
            : outcome === "failed"
              ? (r?.error ?? `the session ended ${r?.final_state ?? ""}`.trim())
              : undefined;
      return {
        session_id: a.id,
        branch: wt.branch,
        worktree: wt.path,
        ...(a.model ? { model: a.model } : {}),
        ...(out.permission_mode ? { permission_mode: out.permission_mode } : {}),
        outcome,
        ...(reason ? { reason } : {}),
        checks_passed: ran.filter((c) => c.passed).length,
        checks_total: ran.length,
        checks: ran,
        ...(ran.length ? { checks_log: logPath } : {}),
        diff,
        ...(r?.cost_usd !== undefined ? { cost_usd: r.cost_usd } : {}),
        duration_ms: ms,
        summary: (r?.last_response ?? "").replace(/\s+/g, " ").trim().slice(0, SUMMARY_CHARS),
      };
    }),
  );
  const ranked = rank(results);
  return { repo: base.top, base_commit: base.commit, checks_source: checks.source, attempts: ranked, table: table(ranked) };
}

async function undo(
  cfg: Config,
  ops: FanOutOps,
  top: string,
  attempts: readonly Attempt[],
  started: readonly PromiseSettledResult<StartOutput>[],
): Promise<void> {
  await Promise.all(
    attempts.map(async (a, i) => {
      if (started[i]!.status === "fulfilled")
        await ops.kill({ session_id: a.id, force: true, save_state: false, remove_worktree: true }).catch(() => undefined);
      await removeWorktree(
        { repo: top, path: join(cfg.stateDir, "worktrees", a.id), branch: `cs/${a.id}`, base: "", base_commit: "" },
        { force: true, deleteBranch: true },
      ).catch(() => undefined);
    }),
  );
}

/**
 * The CLI commands of parallel attempts (issue 34): `fan-out` (as the fan_out tool, through callTool: the same
 * schema, checks and audit line), `merge` (as merge_worktree) and `checks show|approve <repo>`: the operator's
 * approval of a repository's `.claude-sessions/checks.json` by its SHA-256 (what fan_out and merge_worktree run).
 */
import { realpath } from "node:fs/promises";
import { parseArgs } from "node:util";
import type { App } from "../app.js";
import type { Config } from "../config.js";
import { SessionError } from "../core/errors.js";
import { callTool } from "../server/call.js";
import { fanOutTool } from "../server/tools/fan-out.js";
import { mergeWorktreeTool } from "../server/tools/merge-worktree.js";
import { approve, readApprovals, REPO_CHECKS_PATH, repoChecksAt, sha256 } from "../sessions/attempts/checks-file.js";
import { repoTop } from "../sessions/launch/worktree.js";
import { git } from "../util/git.js";
import { safeText } from "../util/terminal-text.js";

export const ATTEMPT_COMMANDS = ["fan-out", "merge", "checks"] as const;
export type AttemptCommand = (typeof ATTEMPT_COMMANDS)[number];
export const isAttemptCommand = (c: string): c is AttemptCommand => (ATTEMPT_COMMANDS as readonly string[]).includes(c);

export const ATTEMPT_HELP = `  claude-sessions fan-out <cwd> <prompt…> [--n N] [--model M] [--permission-mode MODE] [--backend B]
                        [--trust-workspace] [--timeout MS] [--json]
                                  one prompt to N sessions, each in its own worktree (as fan_out); prints the ranking
  claude-sessions merge <id> [--target BRANCH] [--strategy merge|squash|rebase] [--json]
                                  merge a session's worktree through the merge queue (as merge_worktree); exit 1 when not merged
  claude-sessions checks show <repo>      the repository's ${REPO_CHECKS_PATH} at HEAD, its SHA-256, and whether it is approved
  claude-sessions checks approve <repo> [--sha SHA256]
                                  approve that file's exact bytes (fan_out and merge_worktree run it; a change needs a new approval)`;

export interface AttemptEnv {
  actor: string;
  out: NodeJS.WriteStream;
  /** The app, made on demand (checks show/approve need only the configuration). */
  app: () => Promise<App>;
  cfg: Config;
}

const line = (s: NodeJS.WriteStream, text: string) => void s.write(safeText(text) + "\n");

function parse(args: string[], options: Record<string, { type: "string" | "boolean" }>) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new SessionError("INVALID_ARGUMENT", e instanceof Error ? e.message : String(e), {
      suggestion: "claude-sessions --help lists each command's options.",
    });
  }
}

export async function runAttemptCommand(cmd: AttemptCommand, args: string[], env: AttemptEnv): Promise<number> {
  if (cmd === "checks") return checks(args, env);
  if (cmd === "merge") return merge(args, env);
  const { values: v, positionals } = parse(args, {
    n: { type: "string" },
    model: { type: "string" },
    "permission-mode": { type: "string" },
    backend: { type: "string" },
    "trust-workspace": { type: "boolean" },
    timeout: { type: "string" },
    json: { type: "boolean" },
  });
  const [cwd, ...words] = positionals;
  if (!cwd || !words.length) throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions fan-out <cwd> <prompt…> [--n N]");
  const raw: Record<string, unknown> = { cwd: await realpath(cwd).catch(() => cwd), prompt: words.join(" ") };
  if (v.n !== undefined) raw.n = Number(v.n);
  if (v.model !== undefined) raw.model = v.model;
  if (v["permission-mode"] !== undefined) raw.permission_mode = v["permission-mode"];
  if (v.backend !== undefined) raw.backend = v.backend;
  if (v["trust-workspace"]) raw.trust_workspace = true;
  if (v.timeout !== undefined) raw.timeout_ms = Number(v.timeout);
  const app = await env.app();
  const r = await callTool(app.sessions, fanOutTool, raw, { actor: env.actor });
  if (v.json) line(env.out, JSON.stringify(r, null, 2));
  else line(env.out, `base ${r.base_commit.slice(0, 12)} of ${r.repo} (checks: ${r.checks_source})\n${r.table}`);
  return r.attempts.some((a) => a.outcome === "completed") ? 0 : 1;
}

async function merge(args: string[], env: AttemptEnv): Promise<number> {
  const { values: v, positionals } = parse(args, {
    target: { type: "string" },
    strategy: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length !== 1)
    throw new SessionError(
      "INVALID_ARGUMENT",
      "usage: claude-sessions merge <id> [--target BRANCH] [--strategy merge|squash|rebase]",
    );
  const raw: Record<string, unknown> = { session_id: positionals[0] };
  if (v.target !== undefined) raw.target = v.target;
  if (v.strategy !== undefined) raw.strategy = v.strategy;
  const app = await env.app();
  const r = await callTool(app.sessions, mergeWorktreeTool, raw, { actor: env.actor });
  if (v.json) line(env.out, JSON.stringify(r, null, 2));
  else if (r.merged)
    line(
      env.out,
      `merged ${r.session_id} into ${r.target} (${r.strategy}): ${r.target_before.slice(0, 12)} → ${r.target_after.slice(0, 12)}` +
        `${r.checks ? `, ${r.checks.length} check(s) passed` : ""}`,
    );
  else
    line(
      env.out,
      r.conflicts
        ? `not merged: conflicts in ${r.conflicts.join(", ")}; ${r.target} unchanged`
        : `not merged: ${r.reason ?? "?"}`,
    );
  return r.merged ? 0 : 1;
}

async function checks(args: string[], env: AttemptEnv): Promise<number> {
  const { values: v, positionals } = parse(args, { sha: { type: "string" } });
  const [verb, repo] = positionals;
  if ((verb !== "show" && verb !== "approve") || !repo || positionals.length > 2)
    throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions checks show|approve <repo> [--sha SHA256]");
  const top = await realpath(await repoTop(repo));
  const head = await git(top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (head.code !== 0) throw new SessionError("INVALID_ARGUMENT", `${top} has no commit.`);
  const file = await repoChecksAt(top, head.stdout.trim());
  if (!file)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${top} has no ${REPO_CHECKS_PATH} at HEAD (${head.stdout.trim().slice(0, 12)}).`,
      { suggestion: "Commit the file first: the checks are read from the base commit, never from a worktree." },
    );
  const sha = sha256(file);
  const approved = (await readApprovals(env.cfg))[top] === sha;
  if (verb === "show") {
    line(
      env.out,
      `${REPO_CHECKS_PATH} of ${top} at ${head.stdout.trim().slice(0, 12)}\nsha256 ${sha} (${approved ? "approved" : "not approved"})\n` +
        `${file.toString("utf8")}`,
    );
    return approved ? 0 : 1;
  }
  if (v.sha !== undefined && v.sha !== sha)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the file's sha256 is ${sha}, not ${v.sha}: it changed since you read it; nothing was approved.`,
    );
  await approve(env.cfg, top, sha);
  line(env.out, `approved ${REPO_CHECKS_PATH} of ${top}: sha256 ${sha}\n${file.toString("utf8")}`);
  return 0;
}

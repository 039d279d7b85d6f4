/**
 * Which checks fan_out and merge_worktree run (issue 34): the operator's, never a caller's string. Either the
 * repository's `.claude-sessions/checks.json` as the base commit has it (read from git, not from a worktree a
 * session could have changed), run only when the operator approved its exact bytes (SHA-256, in
 * `<state>/checks-approved.json`, written by `claude-sessions checks approve <repo>`); or, when the repository
 * has no such file, the operator's CLAUDE_SESSIONS_CHECKS file. Each check is an argv whose program is resolved on
 * the server's PATH before anything is started.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Config } from "../../config.js";
import { SessionError } from "../../core/errors.js";
import { writeFileWhole } from "../../util/fs/atomic.js";
import { git } from "../../util/git.js";
import { resolveProgram } from "../../util/proc/programs.js";

export const REPO_CHECKS_PATH = ".claude-sessions/checks.json";
const APPROVALS = "checks-approved.json";

const checkSpec = z.strictObject({
  name: z.string().min(1).max(100),
  argv: z.array(z.string().max(4096)).min(1).max(256),
  timeout_ms: z
    .number()
    .int()
    .min(100)
    .max(24 * 3_600_000)
    .default(600_000),
});
const checksFile = z.strictObject({ checks: z.array(checkSpec).max(32) });
const approvals = z.strictObject({ approved: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)) });

export interface Check {
  name: string;
  /** argv[0] resolved to an absolute path on the server's PATH. */
  file: string;
  args: string[];
  timeoutMs: number;
}

export interface Checks {
  source: "config" | "repo" | "none";
  checks: Check[];
}

export const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

function parseChecks(text: string, where: string): Check[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new SessionError("INVALID_ARGUMENT", `${where} is not JSON: ${String(e)}`, {
      suggestion: 'Write {"checks":[{"name":"test","argv":["npm","test"]}]}.',
    });
  }
  const p = checksFile.safeParse(json);
  if (!p.success)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${where} does not hold {checks:[{name, argv, timeout_ms?}]}: ${p.error.issues[0]?.message ?? "invalid"}`,
    );
  return p.data.checks.map((c) => {
    const file = resolveProgram(c.argv[0]!, process.env.PATH);
    if (!file)
      throw new SessionError(
        "INVALID_ARGUMENT",
        `check ${JSON.stringify(c.name)} of ${where}: program ${JSON.stringify(c.argv[0])} is not found on the server's PATH.`,
      );
    return { name: c.name, file, args: c.argv.slice(1), timeoutMs: c.timeout_ms };
  });
}

/** The repository's checks file as `commit` has it, or undefined when it has none. */
export async function repoChecksAt(top: string, commit: string): Promise<Buffer | undefined> {
  const spec = `${commit}:${REPO_CHECKS_PATH}`;
  const has = await git(top, ["cat-file", "-e", "--end-of-options", spec]);
  if (has.code !== 0) return undefined;
  const r = await git(top, ["cat-file", "blob", "--end-of-options", spec]);
  if (r.code !== 0)
    throw new SessionError("PROCESS_ERROR", `reading ${REPO_CHECKS_PATH} at ${commit} failed: ${r.stderr.trim().slice(0, 300)}`);
  return Buffer.from(r.stdout, "utf8");
}

export async function readApprovals(cfg: Config): Promise<Record<string, string>> {
  const text = await readFile(join(cfg.stateDir, APPROVALS), "utf8").catch(() => undefined);
  if (text === undefined) return {};
  const p = approvals.safeParse(JSON.parse(text));
  return p.success ? p.data.approved : {};
}

/** Records the operator's approval of `sha` for the repository at `top` (replacing an earlier one). */
export async function approve(cfg: Config, top: string, sha: string): Promise<void> {
  const approved = { ...(await readApprovals(cfg)), [top]: sha };
  await writeFileWhole(join(cfg.stateDir, APPROVALS), JSON.stringify({ approved }, null, 2) + "\n");
}

/** The checks for the repository at `top` as of `commit`: refused (PERMISSION_DENIED) when its file is not approved. */
export async function loadChecks(cfg: Config, top: string, commit: string): Promise<Checks> {
  const repoFile = await repoChecksAt(top, commit);
  if (repoFile) {
    const sha = sha256(repoFile);
    const ok = (await readApprovals(cfg))[top];
    if (ok !== sha) {
      throw new SessionError(
        "PERMISSION_DENIED",
        `${REPO_CHECKS_PATH} of ${top} (sha256 ${sha}) is ${ok ? "changed since the operator approved it" : "not approved by the operator"}; ` +
          `nothing was started.`,
        {
          suggestion: `The operator reviews the file and runs: claude-sessions checks approve ${top}`,
          details: { sha256: sha },
        },
      );
    }
    return { source: "repo", checks: parseChecks(repoFile.toString("utf8"), `${REPO_CHECKS_PATH} at ${commit.slice(0, 12)}`) };
  }
  if (cfg.checksFile) {
    const text = await readFile(cfg.checksFile, "utf8").catch((e: unknown) => {
      throw new SessionError("PROCESS_ERROR", `CLAUDE_SESSIONS_CHECKS ${cfg.checksFile} cannot be read: ${String(e)}`);
    });
    return { source: "config", checks: parseChecks(text, "CLAUDE_SESSIONS_CHECKS") };
  }
  return { source: "none", checks: [] };
}

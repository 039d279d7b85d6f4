/**
 * What a session changed in its worktree since the base commit, committed or not, untracked files included:
 * counted through a scratch index (GIT_INDEX_FILE), so the worktree's own index is never touched.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git } from "../../util/git.js";

export interface DiffStat {
  files: number;
  added: number;
  removed: number;
}

export async function diffStat(worktree: string, baseCommit: string): Promise<DiffStat> {
  const dir = await mkdtemp(join(tmpdir(), "cs-diff-"));
  const env = { GIT_INDEX_FILE: join(dir, "index") };
  try {
    if ((await git(worktree, ["read-tree", "HEAD"], 60_000, env)).code !== 0) return { files: 0, added: 0, removed: 0 };
    await git(worktree, ["add", "-A"], 60_000, env);
    const r = await git(
      worktree,
      ["diff", "--cached", "--numstat", "--no-ext-diff", "--no-textconv", "--no-renames", baseCommit],
      60_000,
      env,
    );
    const s: DiffStat = { files: 0, added: 0, removed: 0 };
    for (const line of r.stdout.split("\n")) {
      const m = /^(\d+|-)\t(\d+|-)\t/.exec(line);
      if (!m) continue;
      s.files++;
      s.added += m[1] === "-" ? 0 : Number(m[1]);
      s.removed += m[2] === "-" ? 0 : Number(m[2]);
    }
    return s;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A session must not be able to edit the server's state directory: with the scripts, the settings and the
 * permission decisions there, a session allowed to edit it (acceptEdits in its cwd or add_dirs) could answer its
 * own permission requests. The settings file denies the file tools there (claude/hooks.ts); this refuses, before
 * anything is made, a cwd or add_dirs entry that contains the state directory, or that lies inside it other than in
 * a worktree the server made (<state>/worktrees/).
 */
import { realpath } from "node:fs/promises";
import { join, sep } from "node:path";
import { SessionError } from "../core/errors.js";

const within = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** Throws INVALID_ARGUMENT when one of `dirs` ([path, what]) contains `stateDir` or lies in it outside worktrees/. */
export async function assertOutsideState(stateDir: string, dirs: ReadonlyArray<readonly [string, string]>): Promise<void> {
  const worktrees = join(stateDir, "worktrees");
  for (const [dir, what] of dirs) {
    const real = await realpath(dir).catch(() => dir);
    if (within(stateDir, real)) {
      throw new SessionError("INVALID_ARGUMENT", `${what} ${JSON.stringify(dir)} contains this server's state directory ${stateDir}: a session that may edit there could answer its own permission requests; nothing was started.`, {
        suggestion: "Choose a folder that does not contain it, or run the server with CLAUDE_SESSIONS_DIR set to a directory outside the folders sessions work in.",
      });
    }
    if (within(real, stateDir) && !within(real, worktrees + sep)) {
      throw new SessionError("INVALID_ARGUMENT", `${what} ${JSON.stringify(dir)} is inside this server's state directory ${stateDir}; nothing was started.`, {
        suggestion: "Choose a folder outside it (worktree: true makes the session's own checkout under <state>/worktrees).",
      });
    }
  }
}

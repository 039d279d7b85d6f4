/**
 * A session must not be able to edit the server's state directory: with the scripts, the settings and the
 * permission decisions there, a session allowed to edit it (acceptEdits in its cwd or add_dirs) could answer its
 * own permission requests. The settings file denies the file tools there (claude/hooks.ts) and the scripts are
 * checked by content before each use; this refuses, before anything is made, a cwd or add_dirs entry that lies
 * inside the state directory other than in a worktree the server made (<state>/worktrees/). A folder that merely
 * contains it (HOME, with the default ~/.claude/sessions) is allowed with a warning: the deny rules cover the file
 * tools, but a shell command the session is allowed to run could still reach it.
 */
import { realpath } from "node:fs/promises";
import { join, sep } from "node:path";
import { SessionError } from "../../core/errors.js";
import { isWithin } from "../../util/fs/paths.js";

/** Throws INVALID_ARGUMENT when one of `dirs` ([path, what]) is the state directory or lies in it outside worktrees/. */
export async function assertOutsideState(stateDir: string, dirs: ReadonlyArray<readonly [string, string]>): Promise<void> {
  const worktrees = join(stateDir, "worktrees");
  for (const [dir, what] of dirs) {
    const real = await realpath(dir).catch(() => dir);
    if (isWithin(real, stateDir) && !isWithin(real, worktrees + sep)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${what} ${JSON.stringify(dir)} is inside this server's state directory ${stateDir}; nothing was started.`,
        {
          suggestion: "Choose a folder outside it (worktree: true makes the session's own checkout under <state>/worktrees).",
        },
      );
    }
  }
}

/** The warning of a session whose cwd or add_dirs contain the state directory (absolute paths, as recorded). */
export function containsStateWarning(stateDir: string, dirs: readonly string[]): string | undefined {
  const over = dirs.filter((d) => d !== stateDir && isWithin(stateDir, d));
  if (!over.length) return undefined;
  return (
    `${over.map((d) => JSON.stringify(d)).join(", ")} contains this server's state directory ${stateDir}: the session's ` +
    `settings deny its file tools there, but a shell command it is allowed to run could change the server's files. ` +
    `Set CLAUDE_SESSIONS_DIR to a directory outside the folders sessions work in.`
  );
}

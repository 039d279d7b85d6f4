/**
 * Continuing a conversation under another account (issue 33, switch_account): Claude Code resumes a conversation
 * from `<its CLAUDE_CONFIG_DIR>/projects/<cwd>/<id>.jsonl`, so the transcript is copied there first (owner-only; the
 * copy under the account it ran on last is the conversation, and replaces an older one left there by an earlier
 * switch). An account without a config folder of its own uses the server's.
 */
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { configDirFor } from "../../claude/accounts.js";
import { transcriptPath } from "../../claude/transcript.js";
import { SessionError } from "../../core/errors.js";
import type { Deps } from "../deps.js";

/** Copies conversation `claudeId` of `cwd` from account `from`'s folder to `to`'s (nothing when they share one). */
export async function carryTranscript(
  d: Deps,
  cwd: string,
  claudeId: string,
  from: string | undefined,
  to: string | undefined,
): Promise<void> {
  const src = transcriptPath(configDirFor(d.cfg.accountsFile, d.cfg.claudeConfigDir, from), cwd, claudeId);
  const dst = transcriptPath(configDirFor(d.cfg.accountsFile, d.cfg.claudeConfigDir, to), cwd, claudeId);
  if (src === dst) return;
  await mkdir(dirname(dst), { recursive: true, mode: 0o700 });
  const tmp = `${dst}.${randomUUID()}.tmp`;
  try {
    await copyFile(src, tmp);
    await rename(tmp, dst);
  } catch (e) {
    await rm(tmp, { force: true });
    if ((e as NodeJS.ErrnoException).code === "ENOENT")
      throw new SessionError(
        "INVALID_ARGUMENT",
        `conversation ${claudeId} has no transcript under its account yet; nothing was started.`,
        { suggestion: "Resume it without account (it has nothing to carry over)." },
      );
    throw e;
  }
}

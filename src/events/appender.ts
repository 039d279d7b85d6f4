/**
 * The server's own writes to a session's events log, under the flock the hook command takes (claude/hooks.ts), with
 * no shell: its lines never interleave with another writer's and never fall into a compaction (compact.ts copies and
 * truncates under that lock). Each line is written as the hook writes it: a newline first (a torn line from a killed
 * writer never swallows it), then the JSON, then a newline.
 */
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { ensurePrivateFile } from "../util/fs/private-file.js";
import { LockTimeoutError } from "../util/proc/flock.js";
import { toolPaths } from "../util/proc/tools.js";

const LOCK_WAIT_S = "10";

/**
 * Appends `text` to the log under its lock, as the hook command does but with no shell: `flock -w 10 <log>.lock cat`,
 * its stdout the log opened for appending before the lock is taken (a compaction keeps the inode, so such a
 * descriptor still lands at the end), its stdin the text. Two programs, no round trip: the lock is held exactly
 * while cat copies. A lock not had in 10 s is a LockTimeoutError (nothing was written); any other failure throws.
 */
export async function lockedAppend(path: string, text: string): Promise<void> {
  const t = toolPaths();
  ensurePrivateFile(`${path}.lock`); // flock would make it 0644
  const fh = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    await new Promise<void>((resolve, reject) => {
      const c = spawn(t.flock, ["-w", LOCK_WAIT_S, `${path}.lock`, t.cat], {
        stdio: ["pipe", fh.fd, "pipe"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      });
      const { stdin, stderr } = c;
      if (!stdin || !stderr) return reject(new Error("flock started without its pipes"));
      let err = "";
      stderr.on("data", (b: Buffer) => (err += b.toString()).length > 2000 && (err = err.slice(-2000)));
      c.on("error", reject);
      c.on("close", (code) =>
        code === 0
          ? resolve()
          : reject(
              code === 1 && !err
                ? new LockTimeoutError(`the lock ${path}.lock was not free within ${LOCK_WAIT_S} s`)
                : new Error(`appending to ${path} failed (exit ${code}): ${err.trim()}`),
            ),
      );
      stdin.on("error", () => {}); // it ended early: its exit says why
      stdin.end(text);
    });
  } finally {
    await fh.close();
  }
}

/**
 * Appends one session's events from inside this process, in the order they were given, under the same flock the
 * hook command takes (claude/hooks.ts), so they never interleave with another writer's line or fall into a
 * compaction (compact.ts copies and truncates under that lock). Used for a headless session, whose CLI reports its
 * turn's events to the Agent SDK's in-process hook callbacks: the CLI forks no hook process and waits for no write;
 * the lines follow a few milliseconds later.
 *
 * Lines given while a write is under way wait and go together in the next hold of the lock (one `flock` child per
 * hold, not per line: lockedAppend). Each line is written as the hook writes it: a newline first (a torn line from a killed
 * writer never swallows it), then the JSON, then a newline, in one write() on an O_APPEND descriptor.
 * A hold that cannot be had in 10 s (as the hook's `flock -w 10`) is tried again: nothing given is dropped while
 * this process lives, unless the file cannot be written at all (its folder removed), which is reported.
 */
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { ensurePrivateFile } from "../util/fs/private-file.js";
import { LockTimeoutError } from "../util/proc/flock.js";
import { toolPaths } from "../util/proc/tools.js";

const LOCK_WAIT_S = "10";
const RETRY_MS = 200;

/** One event as every writer writes it: a newline first (a torn line before never swallows it), the JSON, a newline. */
export const logLine = (ev: object): string => `\n${JSON.stringify(ev)}\n`;

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

export class EventAppender {
  private queue: string[] = [];
  private writing: Promise<void> | undefined;

  constructor(
    readonly path: string,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  /** Queues one event (a JSON object) and starts writing; `flush()` resolves once it is in the file. */
  push(ev: object): void {
    this.queue.push(logLine(ev));
    this.writing ??= this.drain();
  }

  /** Resolves once everything pushed so far is in the file. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const text = this.queue.join("");
        this.queue = [];
        await this.write(text);
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** One batch; a lock that stayed taken 10 s (another writer) is waited for again, any other failure reported. */
  private async write(text: string): Promise<void> {
    for (;;) {
      try {
        return await lockedAppend(this.path, text);
      } catch (e) {
        this.onError(e);
        // The session's folder gone (its record deleted) or the tools missing: nothing can be written, as for a hook.
        if (!(e instanceof LockTimeoutError)) return;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }
}

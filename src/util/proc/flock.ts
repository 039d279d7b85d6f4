/**
 * A cross-process lock on a file, held by a `flock` child process: the kernel's flock(2), so it is
 * released when the holder goes, however it goes (kill -9 of the server closes the child's stdin, the
 * child exits, the lock is free). Used to serialise sends to one session across servers that share a
 * state directory (paste + Enter + confirm must not interleave with another server's).
 *
 * Cost: one short-lived process per hold (flock + sh + cat), a few milliseconds.
 */
import { spawn } from "node:child_process";
import { ensurePrivateFile } from "../fs/private-file.js";
import { SessionError } from "../../core/errors.js";

export interface FileLock {
  /** Releases the lock; resolves once the holder process has exited (the lock is free). */
  release(): Promise<void>;
}

/** The lock stayed taken for the whole wait: someone else is sending to (or resuming) the same session. */
export class LockTimeoutError extends SessionError {
  constructor(message: string) {
    super("SESSION_BUSY", message, {
      suggestion: "Another call (maybe from another server) is busy with this session; try again in a moment.",
    });
  }
}

export function acquireFileLock(
  path: string,
  opts: { timeoutMs?: number; signal?: AbortSignal; flockPath?: string } = {},
): Promise<FileLock> {
  const timeoutS = Math.max(0, (opts.timeoutMs ?? 30_000) / 1000).toFixed(3);
  ensurePrivateFile(path); // flock would make it 0644
  // The lock is held by flock while its command runs: sh says so, then waits for stdin to close.
  const child = spawn(opts.flockPath ?? "flock", ["-w", timeoutS, path, "sh", "-c", "echo locked; exec cat >/dev/null"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return new Promise<FileLock>((resolve, reject) => {
    let out = "";
    let err = "";
    let held = false;
    const onAbort = () => {
      child.kill("SIGKILL");
      reject(new SessionError("CANCELLED", `waiting for the lock ${path} was cancelled`));
    };
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (e) => reject(e));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      if (held || !out.includes("locked")) return;
      held = true;
      opts.signal?.removeEventListener("abort", onAbort);
      resolve({
        release: async () => {
          child.stdin.end();
          await exited;
        },
      });
    });
    void exited.then((code) => {
      opts.signal?.removeEventListener("abort", onAbort);
      if (!held)
        reject(
          code === 1
            ? new LockTimeoutError(`the lock ${path} was not free within ${timeoutS} s`)
            : new Error(`flock on ${path} failed (exit ${code}): ${err.trim()}`),
        );
    });
    child.stdin.on("error", () => {}); // the holder already gone
  });
}

/** Runs `fn` while holding the lock on `path`. */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T>,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const lock = await acquireFileLock(path, opts);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

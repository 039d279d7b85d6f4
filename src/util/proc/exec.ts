/**
 * The one place that runs external programs: argv arrays only, never a shell string.
 */
import { spawn } from "node:child_process";

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string | Buffer;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Keep only the last this many bytes of each of stdout and stderr (default: all). */
  maxOutputBytes?: number;
}

export class ExecError extends Error {
  constructor(
    readonly file: string,
    readonly result: RunResult | undefined,
    message: string,
    readonly errno?: string,
  ) {
    super(message);
    this.name = "ExecError";
  }
}

/** Runs `file` with `args`; resolves with the exit status whatever it is, rejects only when it could not run. */
export function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      timeout: opts.timeoutMs ?? 10_000,
      killSignal: "SIGKILL",
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const keep = (into: Buffer[], b: Buffer) => {
      into.push(b);
      if (opts.maxOutputBytes === undefined) return;
      let size = into.reduce((n, x) => n + x.length, 0);
      while (size > opts.maxOutputBytes && into.length > 1) size -= into.shift()!.length;
      if (size > opts.maxOutputBytes) into[0] = into[0]!.subarray(size - opts.maxOutputBytes);
    };
    child.stdout?.on("data", (b: Buffer) => keep(out, b));
    child.stderr?.on("data", (b: Buffer) => keep(err, b));
    child.on("error", (e: NodeJS.ErrnoException) => reject(new ExecError(file, undefined, `${file}: ${e.message}`, e.code)));
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }),
    );
    if (opts.input !== undefined && child.stdin) {
      child.stdin.on("error", () => {});
      child.stdin.end(opts.input);
    }
  });
}

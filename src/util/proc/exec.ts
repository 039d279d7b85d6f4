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
    child.stdout?.on("data", (b: Buffer) => out.push(b));
    child.stderr?.on("data", (b: Buffer) => err.push(b));
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

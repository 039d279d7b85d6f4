/**
 * Runs the operator's checks in one directory (a session's worktree, or a merge's scratch worktree): argv, the
 * directory as cwd, each its own time limit, an environment of the basics only (no secret of the server's), the
 * output kept bounded (the last 64 KiB of each stream) and written to `logPath`. With a box (a sandboxed session's
 * checks, sandbox/check-box.ts) each check runs under bubblewrap: no network, the worktree its only writable place,
 * its program put back when it lives in a hidden temporary folder.
 */
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { CheckResult } from "../../api/index.js";
import { run } from "../../util/proc/exec.js";
import { boxed, programBinds, type CheckBox } from "../../sandbox/check-box.js";
import type { Check } from "./checks-file.js";

const KEEP_BYTES = 64 * 1024;
const TAIL_CHARS = 2000;
const PASSED_ENV = /^(PATH|HOME|USER|LOGNAME|LANG|LC_[A-Z]+|TZ|TMPDIR|TERM|SHELL)$/;

function checkEnv(box: CheckBox | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { CI: "1" };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && PASSED_ENV.test(k)) env[k] = v;
  // In the box the host's temporary folders are hidden: its own /tmp is the one there is.
  if (box) env.TMPDIR = "/tmp";
  return env;
}

export async function runChecks(checks: readonly Check[], cwd: string, logPath: string, box?: CheckBox): Promise<CheckResult[]> {
  await mkdir(dirname(logPath), { recursive: true, mode: 0o700 });
  await writeFile(logPath, "", { mode: 0o600 });
  const out: CheckResult[] = [];
  for (const c of checks) {
    const t0 = Date.now();
    const env = checkEnv(box);
    // A program in a hidden temporary folder (a Node under /tmp) is put back read-only, with what it needs.
    const cmd = box ? boxed(box, c.file, c.args, programBinds(box, c.file, env.PATH)) : { file: c.file, args: c.args };
    const r = await run(cmd.file, cmd.args, {
      cwd,
      env,
      timeoutMs: c.timeoutMs,
      maxOutputBytes: KEEP_BYTES,
    }).catch((e: unknown) => ({ code: null, signal: null, stdout: "", stderr: String(e) }));
    const duration = Date.now() - t0;
    const timedOut = r.code === null && r.signal === "SIGKILL" && duration >= c.timeoutMs - 50;
    const text = r.stdout + r.stderr;
    await appendFile(
      logPath,
      `$ ${JSON.stringify([c.file, ...c.args])} (${c.name})\n${text}${text.endsWith("\n") || !text ? "" : "\n"}[exit ` +
        `${r.code ?? r.signal}${timedOut ? ", timed out" : ""}]\n`,
    );
    out.push({
      name: c.name,
      passed: r.code === 0,
      exit_code: r.code,
      timed_out: timedOut,
      duration_ms: duration,
      output_tail: text.slice(-TAIL_CHARS),
    });
  }
  return out;
}

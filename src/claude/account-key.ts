/**
 * A `doppler` account's API key (issue 33): the accounts file names a Doppler project, config and secret, never the
 * key. The server reads the secret when a session is admitted under the account — `doppler run [-p P] [-c C] --
 * printenv SECRET`, an argv of names only, the value coming back on a pipe — and keeps it in memory for a while; the
 * launch gives it to the CLI as ANTHROPIC_API_KEY through the child's environment (never argv, state, logs or results).
 * No message here quotes doppler's output (it could hold the value): only its exit status and the secret's NAME.
 */
import { SessionError } from "../core/errors.js";
import { run } from "../util/proc/exec.js";
import { resolveProgram } from "../util/proc/programs.js";
import { findOnPath } from "./discover.js";

export interface DopplerSource {
  project?: string;
  config?: string;
  /** The NAME of the secret that holds the key. */
  secret: string;
}

/** A key is read again after this long (a rotated key reaches the next start). */
const KEEP_MS = 10 * 60_000;

/** Keys read, by account and source: an account whose entry in the file changed is read again. */
const keys = new Map<string, { key: string; at: number }>();

const keyOf = (name: string, src: DopplerSource) => JSON.stringify([name, src.project ?? "", src.config ?? "", src.secret]);

/** The key read for account `name` from `src` (within KEEP_MS), if any. */
export function fetchedKey(name: string, src: DopplerSource): string | undefined {
  const k = keys.get(keyOf(name, src));
  return k && Date.now() - k.at < KEEP_MS ? k.key : undefined;
}

function failed(name: string, why: string): SessionError {
  return new SessionError(
    "DOPPLER_ERROR",
    `account ${name}: its key could not be read from Doppler (${why}); nothing was started.`,
    {
      suggestion: "Check the account's doppler project, config and secret, and that the server's doppler is logged in.",
    },
  );
}

/** Reads account `name`'s key from Doppler (unless read lately); DOPPLER_ERROR when doppler fails or the secret is empty. */
export async function fetchDopplerKey(
  name: string,
  src: DopplerSource,
  dopplerPath: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (fetchedKey(name, src)) return;
  const doppler = findOnPath("doppler", dopplerPath, env).path;
  if (!doppler) throw failed(name, `the doppler CLI was not found${dopplerPath ? ` at DOPPLER_PATH` : " on PATH"}`);
  const printenv = resolveProgram("printenv", env.PATH) ?? resolveProgram("printenv", "/usr/bin:/bin");
  if (!printenv) throw failed(name, "printenv was not found");
  const args = [
    "run",
    ...(src.project ? ["-p", src.project] : []),
    ...(src.config ? ["-c", src.config] : []),
    "--",
    printenv,
    src.secret,
  ];
  let r;
  try {
    r = await run(doppler, args, { env, timeoutMs: 30_000, maxOutputBytes: 64 * 1024 });
  } catch {
    throw failed(name, "doppler did not run");
  }
  const key = r.stdout.replace(/\r?\n$/, "");
  if (r.code !== 0 || !key)
    throw failed(name, r.code === 0 ? `the secret ${src.secret} is empty` : `doppler exited with code ${r.code}`);
  if (/[\r\n\0]/.test(key)) throw failed(name, `the secret ${src.secret} is not one line`);
  keys.set(keyOf(name, src), { key, at: Date.now() });
}

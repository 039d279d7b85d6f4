/**
 * The one way the server runs git: a repository's own configuration must never make the server run a program.
 * git has no single off switch, so every call gets:
 * - `-c` options that empty what git would otherwise start: hooks (core.hooksPath), fsmonitor, the external diff
 *   (diff.external; diff drivers' `command` go with --no-ext-diff, which callers of diff pass with --no-textconv),
 *   pager, ssh and askpass programs, alternate-refs command; no submodule recursion (a submodule's config is not
 *   read here), no auto gc, no transport.
 * - every filter driver configured for the repository (`filter.<name>.*`, read with `git config -z --get-regexp`
 *   in the same cwd, includes and includeIf evaluated as the real call will) overridden to nothing, and
 *   `required=false` so git does not die for want of it. The overrides go through GIT_CONFIG_COUNT/KEY/VALUE, so a
 *   driver name with any character in it is passed exactly.
 * Between reading the names and running the command the repository's config could change (a race of
 * milliseconds that needs someone who can already write .git/config); `worktree add` is made with --no-checkout
 * and checked out in the new worktree so includeIf onbranch: is evaluated for the branch that is checked out.
 */
import { run, type RunResult } from "./proc/exec.js";

export const GIT_SAFE: readonly string[] = [
  "--no-pager",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.pager=cat",
  "-c",
  "core.sshCommand=",
  "-c",
  "core.askPass=",
  "-c",
  "core.alternateRefsCommand=",
  "-c",
  "diff.external=",
  "-c",
  "submodule.recurse=false",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "-c",
  "protocol.allow=never",
  "-c",
  "credential.helper=",
  "-c",
  "commit.gpgSign=false",
];

const FILTER_KEY = /^filter\.(.+)\.(smudge|clean|process|required)$/is;
/** A merge driver (`merge.<name>.driver`, a shell command): overridden to `false` (a conflict, never a program of the repository's). */
const MERGE_DRIVER_KEY = /^merge\.(.+)\.driver$/is;

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // The server's own GIT_CONFIG_* / external-diff settings do not reach the calls: ours are complete.
    if (
      v === undefined ||
      /^GIT_(CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)|EXTERNAL_DIFF|PAGER|SSH|SSH_COMMAND|ASKPASS)$/.test(k)
    )
      continue;
    env[k] = v;
  }
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", GIT_PAGER: "cat" };
}

/** The names of the filter drivers git sees in `cwd` (none when it is not a repository). */
export async function filterDrivers(cwd: string, timeoutMs = 30_000): Promise<string[]> {
  return (await configuredDrivers(cwd, timeoutMs)).filters;
}

async function configuredDrivers(cwd: string, timeoutMs: number): Promise<{ filters: string[]; merges: string[] }> {
  const r = await run("git", [...GIT_SAFE, "config", "-z", "--get-regexp", "^(filter|merge)\\."], {
    cwd,
    timeoutMs,
    env: baseEnv(),
  });
  const names = new Set<string>();
  const merges = new Set<string>();
  for (const entry of r.stdout.split("\0")) {
    const key = entry.split("\n", 1)[0]!;
    const m = FILTER_KEY.exec(key);
    if (m) names.add(m[1]!);
    const d = MERGE_DRIVER_KEY.exec(key);
    if (d) merges.add(d[1]!);
  }
  return { filters: [...names], merges: [...merges] };
}

/** git with argv only, no prompts, no optional locks, nothing of the repository's configuration run. */
export async function git(
  cwd: string,
  args: string[],
  timeoutMs = 30_000,
  extraEnv: Record<string, string> = {},
): Promise<RunResult> {
  // extraEnv: git's own variables a caller needs (GIT_INDEX_FILE for a scratch index); never GIT_CONFIG_*.
  const env = { ...baseEnv(), ...Object.fromEntries(Object.entries(extraEnv).filter(([k]) => !k.startsWith("GIT_CONFIG"))) };
  const { filters: drivers, merges } = await configuredDrivers(cwd, timeoutMs).catch(() => ({
    filters: [] as string[],
    merges: [] as string[],
  }));
  let n = 0;
  for (const name of merges) {
    env[`GIT_CONFIG_KEY_${n}`] = `merge.${name}.driver`;
    env[`GIT_CONFIG_VALUE_${n}`] = "false";
    n++;
  }
  for (const name of drivers) {
    for (const [k, v] of [
      ["smudge", ""],
      ["clean", ""],
      ["process", ""],
      ["required", "false"],
    ] as const) {
      env[`GIT_CONFIG_KEY_${n}`] = `filter.${name}.${k}`;
      env[`GIT_CONFIG_VALUE_${n}`] = v;
      n++;
    }
  }
  if (n) env.GIT_CONFIG_COUNT = String(n);
  return run("git", [...GIT_SAFE, ...args], { cwd, timeoutMs, env });
}

/**
 * The Claude Code versions this project is tested with — the one place they are written down — and the version
 * of a `claude` binary, read once per path and modification time.
 */
import { realpath, stat } from "node:fs/promises";
import { run } from "../util/proc/exec.js";

/**
 * oldest: the oldest version the project supports (the newest whose package allows Node 20); pinned: the
 * devDependency the tests run (update it with package.json); newest: the newest version the suites were run on.
 */
export const TESTED_CLI = { oldest: "2.1.197", pinned: "2.1.330", newest: "2.1.332" } as const;

/** "2.1.330" out of `claude --version`'s "2.1.330 (Claude Code)"; undefined when there is none. */
export function parseCliVersion(out: string): string | undefined {
  return /(?:^|\s)v?(\d+\.\d+\.\d+)(?=[\s(]|$)/.exec(out.trim())?.[1];
}

/** Compares two x.y.z versions numerically: <0, 0, >0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** What to tell the operator about a CLI version: nothing inside the tested range, a sentence outside it. */
export function versionWarning(version: string | undefined): string | undefined {
  const range = `${TESTED_CLI.oldest}–${TESTED_CLI.newest}, pinned ${TESTED_CLI.pinned}`;
  if (!version) return `the claude CLI did not report its version; the tested range is ${range}`;
  if (compareVersions(version, TESTED_CLI.oldest) < 0)
    return `claude ${version} is older than the oldest supported version (${range}); sessions may misbehave`;
  if (compareVersions(version, TESTED_CLI.newest) > 0)
    return `claude ${version} is newer than the newest version checked (${range}); it works but is untested: pin a tested one with CLAUDE_PATH`;
  return undefined;
}

const cache = new Map<string, { key: string; version: Promise<string | undefined> }>();

/**
 * `<path> --version`, cached per binary (its real path, size and mtime: an update in place is read again; calls at
 * the same moment share one run). undefined when the binary does not run or prints no version.
 */
export async function cliVersion(path: string, timeoutMs = 10_000): Promise<string | undefined> {
  const real = await realpath(path).catch(() => path);
  const st = await stat(real).catch(() => undefined);
  if (!st) return undefined;
  const key = `${st.size}:${st.mtimeMs}`;
  const hit = cache.get(real);
  if (hit?.key === key) return hit.version;
  const version = run(path, ["--version"], { timeoutMs, env: { ...process.env, DISABLE_AUTOUPDATER: "1" } }).then(
    (r) => (r.code === 0 ? parseCliVersion(r.stdout) : undefined),
    () => undefined,
  );
  cache.set(real, { key, version });
  return version;
}

/**
 * Programs by their resolved path: what a name means on the server's PATH, and whether a program is one of an
 * operator's allow-list (CLAUDE_SESSIONS_SETUP_COMMANDS, CLAUDE_SESSIONS_MCP_COMMANDS). A name is looked up in the
 * absolute directories of PATH only; a match compares the real file (symbolic links followed) and the name it is
 * run by (a multi-call binary such as busybox acts by that name), so allowing `touch` never allows `sh`.
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { basename, delimiter, isAbsolute, join } from "node:path";

function isExecutableFile(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The absolute path `program` runs as: an absolute path as it is, a bare name from the absolute directories of
 * `pathVar`; undefined when it is not an executable file, or is a relative path with a slash.
 */
export function resolveProgram(program: string, pathVar: string | undefined): string | undefined {
  if (!program || program.includes("\0")) return undefined;
  if (isAbsolute(program)) return isExecutableFile(program) ? program : undefined;
  if (program.includes("/")) return undefined;
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const p = join(dir, program);
    if (isExecutableFile(p)) return p;
  }
  return undefined;
}

/** A comma-separated list from the environment (blank entries dropped). */
export function parseList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function identity(p: string): { real: string; name: string } | undefined {
  try {
    return { real: realpathSync(p), name: basename(p) };
  } catch {
    return undefined;
  }
}

/**
 * Whether the program at absolute path `resolved` is one of `allowed` (names or absolute paths, each resolved on
 * `pathVar` now): the same real file, run by the same name.
 */
export function isAllowedProgram(resolved: string, allowed: readonly string[], pathVar: string | undefined): boolean {
  const me = identity(resolved);
  if (!me) return false;
  for (const entry of allowed) {
    const p = resolveProgram(entry, pathVar);
    const it = p ? identity(p) : undefined;
    if (it && it.real === me.real && it.name === me.name) return true;
  }
  return false;
}

/**
 * The programs the server's own scripts and hook commands call (flock, paste, cat, sh, …), by absolute paths
 * found once on the server's PATH when the server starts. A hook runs in Claude's environment, which a caller's
 * `env` may shape: a bare `flock` there would be whatever its PATH names first.
 */
import { resolveProgram } from "./programs.js";

export interface ToolPaths {
  sh: string;
  bash: string;
  flock: string;
  paste: string;
  cat: string;
  sed: string;
  date: string;
  sleep: string;
  rm: string;
  cp: string;
  split: string;
  mv: string;
}

const NAMES: Array<keyof ToolPaths> = ["sh", "bash", "flock", "paste", "cat", "sed", "date", "sleep", "rm", "cp", "split", "mv"];

/** Where a tool is when the server's PATH does not name it (then it fails as it would have, never another one). */
const FALLBACK_DIRS = ["/usr/bin", "/bin"];

export function resolveToolPaths(pathVar: string | undefined): ToolPaths {
  const out = {} as ToolPaths;
  for (const n of NAMES) out[n] = resolveProgram(n, pathVar) ?? resolveProgram(n, FALLBACK_DIRS.join(":")) ?? `/usr/bin/${n}`;
  return out;
}

let cached: ToolPaths | undefined;

/** The tool paths of this process, resolved from its PATH on first use (the server calls it at start-up). */
export function toolPaths(): ToolPaths {
  cached ??= resolveToolPaths(process.env.PATH);
  return cached;
}

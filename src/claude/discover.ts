/**
 * Finding executables: an explicit path, then PATH, then the usual install places of Node tools.
 */
import { accessSync, constants, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function globVersions(dir: string, tail: string): string[] {
  try {
    return readdirSync(dir)
      .sort()
      .reverse()
      .map((v) => join(dir, v, tail));
  } catch {
    return [];
  }
}

/** The places searched for `claude`, in order (after CLAUDE_PATH). */
export function claudeCandidates(env: NodeJS.ProcessEnv = process.env, home = homedir()): string[] {
  const fromPath = (env.PATH ?? "").split(delimiter).filter(Boolean);
  const dirs = [
    ...fromPath,
    "/usr/local/bin",
    "/usr/bin",
    join(home, ".npm-global", "bin"),
    join(home, ".yarn", "bin"),
    join(home, ".volta", "bin"),
    ...globVersions(join(home, ".nvm", "versions", "node"), "bin"),
    ...globVersions(join(home, ".asdf", "installs", "nodejs"), "bin"),
    join(home, ".claude", "local"),
    join(home, ".local", "bin"),
  ];
  return [...new Set(dirs)].map((d) => join(d, "claude"));
}

export interface Found {
  path?: string;
  searched: string[];
}

export function findClaude(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env, home = homedir()): Found {
  if (explicit) return isExecutable(explicit) ? { path: explicit, searched: [explicit] } : { searched: [explicit] };
  const searched = claudeCandidates(env, home);
  const path = searched.find(isExecutable);
  return path ? { path, searched } : { searched };
}

/** A program from an explicit path or PATH. */
export function findOnPath(name: string, explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): Found {
  if (explicit) return isExecutable(explicit) ? { path: explicit, searched: [explicit] } : { searched: [explicit] };
  const searched = (env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((d) => join(d, name));
  const path = searched.find(isExecutable);
  return path ? { path, searched } : { searched };
}

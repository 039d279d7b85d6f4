/**
 * Claude Code's folder-trust record, read the way the CLI reads it: its global config file
 * (`$CLAUDE_CONFIG_DIR/.claude.json`, else `$HOME/.claude.json`; the legacy `<config dir>/.config.json` when that
 * one is missing) holds `projects[<absolute dir>].hasTrustDialogAccepted`, and a folder counts as trusted when
 * it or any folder above it has the flag, on its real path (symbolic links followed: a link inside a trusted folder
 * that leads elsewhere is where it leads, as the CLI itself sees its working directory). The terminal
 * shows its "trust this folder" screen otherwise; a headless CLI shows nothing and runs the folder's settings, so
 * the server asks this before it starts one (sessions/gates.ts).
 */
import { readFile, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The global config files the CLI of environment `env` reads, the one it prefers first. */
export function trustRecordFiles(env: Record<string, string | undefined>): string[] {
  const configDir = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
  const main = join(env.CLAUDE_CONFIG_DIR || env.HOME || homedir(), ".claude.json");
  return [main, join(configDir, ".config.json")];
}

async function readProjects(files: string[]): Promise<Record<string, { hasTrustDialogAccepted?: unknown }> | undefined> {
  for (const f of files) {
    let text: string;
    try {
      text = await readFile(f, "utf8");
    } catch {
      continue;
    }
    try {
      const v = JSON.parse(text) as { projects?: unknown };
      const p = v && typeof v === "object" ? v.projects : undefined;
      return p && typeof p === "object" ? (p as Record<string, { hasTrustDialogAccepted?: unknown }>) : {};
    } catch {
      // A file the CLI cannot parse trusts nothing.
      return {};
    }
  }
  return undefined;
}

function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) break;
  }
  return out;
}

/** The real path of `p`, or of its nearest existing ancestor with the rest appended (a worktree not made yet). */
async function realish(p: string): Promise<string> {
  const tail: string[] = [];
  for (let d = p; ; d = dirname(d)) {
    const r = await realpath(d).catch(() => undefined);
    if (r) return join(r, ...tail.reverse());
    if (dirname(d) === d) return p;
    tail.push(d.slice(dirname(d).length).replace(/^\//, ""));
  }
}

/**
 * Whether the CLI run with environment `env` trusts folder `dir` (the folder or one above it accepted). `project`:
 * the repository a git worktree belongs to, which the CLI also looks up by its own path (its project key is the
 * canonical repository root).
 */
export async function isFolderTrusted(dir: string, env: Record<string, string | undefined>, project?: string): Promise<boolean> {
  if (env.CLAUDE_CODE_SANDBOXED) return true;
  const projects = await readProjects(trustRecordFiles(env));
  if (!projects) return false;
  // The real path only: the CLI works in (and keys the folder by) where a link leads, so a link placed in a trusted
  // folder must not lend its trust to an untrusted folder elsewhere.
  const candidates = new Set(ancestors(await realish(resolve(dir))));
  if (project) candidates.add(await realish(resolve(project)));
  for (const c of candidates) if (projects[c]?.hasTrustDialogAccepted === true) return true;
  return false;
}

/**
 * Where Claude keeps transcripts: `<config>/projects/<mangled cwd>/<session id>.jsonl`, and (newer
 * versions) sub-agent transcripts in `<config>/projects/<mangled cwd>/<session id>/subagents/*.jsonl`.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface TranscriptRef {
  path: string;
  claudeSessionId: string;
  /** The projects/ folder name (the cwd with every non-alphanumeric character replaced by '-'). */
  project: string;
  /** A sub-agent's transcript: only its usage counts, towards the parent conversation. */
  subagent: boolean;
  mtimeMs: number;
}

const JSONL = /\.jsonl$/;

function entries(dir: string): import("node:fs").Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Every transcript under `<config>/projects`, oldest first (so the index grows roughly in time order). */
export function scanTranscripts(configDir: string): TranscriptRef[] {
  const root = join(configDir, "projects");
  const out: TranscriptRef[] = [];
  for (const proj of entries(root)) {
    if (!proj.isDirectory()) continue;
    const pdir = join(root, proj.name);
    for (const e of entries(pdir)) {
      if (e.isFile() && JSONL.test(e.name)) {
        const path = join(pdir, e.name);
        out.push({ path, claudeSessionId: e.name.replace(JSONL, ""), project: proj.name, subagent: false, mtimeMs: mtime(path) });
      } else if (e.isDirectory()) {
        const sdir = join(pdir, e.name, "subagents");
        for (const s of entries(sdir)) {
          if (!s.isFile() || !JSONL.test(s.name)) continue;
          const path = join(sdir, s.name);
          out.push({ path, claudeSessionId: e.name, project: proj.name, subagent: true, mtimeMs: mtime(path) });
        }
      }
    }
  }
  return out.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : 1));
}

/** The reference for one known path (a transcript the caller just saw change), or undefined if it is not one. */
export function refForPath(configDir: string, path: string): TranscriptRef | undefined {
  const root = join(configDir, "projects");
  if (!JSONL.test(path)) return undefined;
  const dir = dirname(path);
  if (dirname(dir) === root) {
    return {
      path,
      claudeSessionId: basename(path).replace(JSONL, ""),
      project: basename(dir),
      subagent: false,
      mtimeMs: mtime(path),
    };
  }
  if (basename(dir) === "subagents" && dirname(dirname(dirname(dir))) === root) {
    const sessionDir = dirname(dir);
    return {
      path,
      claudeSessionId: basename(sessionDir),
      project: basename(dirname(sessionDir)),
      subagent: true,
      mtimeMs: mtime(path),
    };
  }
  return undefined;
}

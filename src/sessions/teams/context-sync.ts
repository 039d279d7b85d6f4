/**
 * sync_context (and send_message {include_context}): tells a running session what changed in its working directory
 * since its last sync. Git (branch, status, diff stat of the cwd), files (as @path mentions Claude Code loads itself:
 * the named paths, or the files git reports changed), and the NAMES of variables in the cwd's .env files whose value
 * was added, changed or removed. Values are never read into the text; they are compared through an HMAC whose key
 * lives in this process's memory only, so the snapshot (also in memory, on the session object: session.ts) cannot
 * reveal them. The first sync of a session by a server process has nothing to compare with and reports the whole state.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { realpath, stat } from "node:fs/promises";
import { basename, isAbsolute, join, relative } from "node:path";
import type { Resolved, SyncInput } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import { git } from "../../util/git.js";
import { isSecretPath } from "../../util/fs/secret-files.js";
import { isWithin } from "../../util/fs/paths.js";
import { readRegular } from "../../util/fs/files.js";

export type ContextType = "files" | "env" | "git" | "all";

export interface Snapshot {
  git?: string;
  files: Map<string, string>;
  env: Map<string, string>;
}

export interface Gathered {
  text: string;
  files_synced: number;
  env_vars_synced: number;
  git_status_synced: boolean;
  warnings: string[];
  changed: boolean;
  /** Records this state as synced: call once the text was delivered. */
  commit(): void;
}

const KEY = randomBytes(32);
const ENV_FILES = [".env", ".env.local"];
const MAX_STATUS_LINES = 60;
const MAX_FILES = 50;
/** The bytes of a file hashed for its fingerprint (a bigger one adds its size and time) and of an .env file read. */
const MAX_HASHED_BYTES = 16 * 1024 * 1024;
const MAX_ENV_BYTES = 1024 * 1024;
/** Where a session's snapshot is kept: what the session was last told (per server process; session.ts). */
export interface SyncHolder {
  synced: Snapshot | undefined;
}

const clean = (s: string) => s.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "?");

async function gitPart(
  cwd: string,
  warnings: string[],
): Promise<{ text: string; fp: string; changedFiles: string[] } | undefined> {
  const top = await git(cwd, ["rev-parse", "--show-toplevel"]).catch(() => undefined);
  if (!top || top.code !== 0) {
    warnings.push("the session's cwd is not in a git repository: no git context.");
    return undefined;
  }
  const [branch, status, stat] = await Promise.all([
    git(cwd, ["rev-parse", "--abbrev-ref", "HEAD"]),
    git(cwd, ["status", "--porcelain=v1", "--untracked-files=all", "--ignore-submodules=all", "--", "."]),
    git(cwd, ["diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "HEAD", "--stat=120", "--", "."]),
  ]);
  const head = await git(cwd, ["rev-parse", "--short", "HEAD"]);
  const lines = status.stdout.split("\n").filter(Boolean);
  // Porcelain paths are relative to the repository's top; quoted ones (unusual characters) cannot be mentioned.
  const changedFiles = lines
    .map((l) => l.slice(3).replace(/^.* -> /, ""))
    .filter((f) => !f.startsWith('"'))
    .map((f) => join(top.stdout.trim(), f));
  const shown = lines.slice(0, MAX_STATUS_LINES);
  if (lines.length > shown.length) shown.push(`… and ${lines.length - shown.length} more`);
  const text = [
    `Git: branch ${branch.stdout.trim() || "(unknown)"} at ${head.stdout.trim() || "(no commits)"}`,
    shown.length ? `Status:\n${shown.join("\n")}` : "Status: clean",
    ...(stat.stdout.trim()
      ? [`Diff stat against HEAD:\n${stat.stdout.trimEnd().split("\n").slice(-MAX_STATUS_LINES).join("\n")}`]
      : []),
  ].join("\n");
  // Changes to the contents of files already changed show in the diff stat; the hash of the status and stat covers them.
  return { text, fp: createHash("sha256").update(text).digest("hex"), changedFiles };
}

/**
 * A file's fingerprint: the hash of its bytes (the first 16 MiB, with its size and time when bigger); for anything
 * but a regular file (a FIFO, a socket, a device, a directory) its mode and time, without reading it — a FIFO
 * named like a source file must not hang the server.
 */
async function fileFingerprint(path: string): Promise<string | undefined> {
  const r = await readRegular(path, MAX_HASHED_BYTES).catch((e: NodeJS.ErrnoException) =>
    e.code === "ENOTREG" ? "other" : undefined,
  );
  if (r === undefined) return undefined;
  if (r === "other") {
    const st = await stat(path).catch(() => undefined);
    return st ? `${st.mode}:${st.mtimeMs}` : undefined;
  }
  const h = createHash("sha256").update(r.data);
  if (r.truncated) h.update(`\0${r.st.size}:${r.st.mtimeMs}`);
  return h.digest("hex");
}

async function envPart(cwd: string): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  for (const f of ENV_FILES) {
    // A regular file only, never blocking (a FIFO named .env is skipped, not waited on), its first MiB.
    const text = await readRegular(join(cwd, f), MAX_ENV_BYTES).then(
      (r) => r.data.toString("utf8"),
      () => undefined,
    );
    if (text === undefined) continue;
    for (const line of text.split(/\r?\n/)) {
      const x = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line);
      if (x) m.set(x[1]!, createHmac("sha256", KEY).update(`${f}\0${x[2]!.trim()}`).digest("hex"));
    }
  }
  return m;
}

/** What changed for a session (cwd `cwd`) since its last sync, as the text to send. Nothing is sent here. */
export async function gather(
  holder: SyncHolder,
  cwd: string,
  type: ContextType,
  paths: string[] | undefined,
  force = false,
): Promise<Gathered> {
  // force: the whole current state, as on a first sync.
  const prev = force ? undefined : holder.synced;
  const next: Snapshot = {
    ...(prev?.git ? { git: prev.git } : {}),
    files: new Map(prev?.files ?? []),
    env: new Map(prev?.env ?? []),
  };
  const warnings: string[] = [];
  const parts: string[] = [];
  let gitSynced = false;
  let changedFiles: string[] = [];
  const realCwd = await realpath(cwd).catch(() => cwd);

  if (type === "git" || type === "all" || (type === "files" && !paths)) {
    const g = await gitPart(cwd, warnings);
    if (g) {
      changedFiles = g.changedFiles;
      if ((type === "git" || type === "all") && g.fp !== prev?.git) {
        parts.push(g.text);
        next.git = g.fp;
        gitSynced = true;
      }
    }
  }
  let filesSynced = 0;
  if (type === "files" || type === "all") {
    const mentions: string[] = [];
    // Named files, or those changed by git's account. Secret files (util/fs/secret-files.ts) never: a mention makes
    // Claude read the file and send it to the API. Judged on the name given and on the file it resolves to.
    for (const p of (paths ?? changedFiles).slice(0, MAX_FILES)) {
      if (/[\s\x00-\x1f\x7f"]/.test(p)) {
        warnings.push(`${JSON.stringify(p)} has whitespace or a control character and cannot be an @ mention; skipped.`);
        continue;
      }
      const abs = isAbsolute(p) ? p : join(cwd, p);
      if (isSecretPath(relative(realCwd, abs)) || isSecretPath(basename(abs))) {
        if (paths) warnings.push(`${p} looks like a file of secrets; it is never mentioned.`);
        continue;
      }
      const real = await realpath(abs).catch(() => undefined);
      if (!real) {
        const rel = relative(realCwd, abs);
        if (prev?.files.has(rel)) {
          mentions.push(`${rel} (deleted)`);
          next.files.delete(rel);
        } else if (paths) warnings.push(`${p} does not exist; skipped.`);
        continue;
      }
      if (!isWithin(real, realCwd)) {
        warnings.push(`${p} is outside the session's cwd; skipped.`);
        continue;
      }
      if (isSecretPath(relative(realCwd, real))) {
        if (paths) warnings.push(`${p} resolves to a file of secrets; it is never mentioned.`);
        continue;
      }
      const fp = await fileFingerprint(real);
      const rel = relative(realCwd, real) || ".";
      if (fp === undefined || fp === prev?.files.get(rel)) continue;
      next.files.set(rel, fp);
      mentions.push(`@${rel}`);
    }
    if (mentions.length) parts.push(`Files changed (read them again before relying on what you saw): ${mentions.join(" ")}`);
    filesSynced = mentions.length;
  }
  let envSynced = 0;
  if (type === "env" || type === "all") {
    const now = await envPart(cwd);
    const names = [...new Set([...now.keys(), ...(prev?.env.keys() ?? [])])]
      .filter((n) => now.get(n) !== prev?.env.get(n))
      .sort();
    if (names.length) {
      const removed = names.filter((n) => !now.has(n));
      parts.push(
        `Environment: variables in ${ENV_FILES.join(" / ")} changed: ${names.filter((n) => now.has(n)).join(", ") || "(none)"}` +
          (removed.length ? `; removed: ${removed.join(", ")}` : "") +
          ". (Names only; this process's own environment is unchanged: restart what reads them.)",
      );
    }
    next.env = now;
    envSynced = names.length;
  }
  const changed = parts.length > 0;
  const text = clean(
    `[context sync from claude-sessions] What changed in ${cwd} since the last sync. No reply is needed beyond a short ` +
      `acknowledgement.\n\n${parts.join("\n\n") || "Nothing changed."}\n`,
  );
  return {
    text,
    files_synced: filesSynced,
    env_vars_synced: envSynced,
    git_status_synced: gitSynced,
    warnings,
    changed,
    commit: () => void (holder.synced = next),
  };
}

export function assertType(input: Pick<Resolved<SyncInput>, "context_type" | "paths">): ContextType {
  const t = input.context_type ?? "all";
  if (input.paths && t !== "files" && t !== "all")
    throw new SessionError("INVALID_ARGUMENT", `paths go with context_type files or all (got ${t}).`);
  return t;
}

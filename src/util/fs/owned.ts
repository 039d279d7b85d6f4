/**
 * Files and directories the server trusts must be its own: owned by the server's user and not writable by
 * group or others. Otherwise another user could replace a script the server runs (bin/hook.sh) or read a
 * session's files. Also: the one way a caller's path becomes a file we write (a session's log_file).
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, readFile, realpath, rename, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { SessionError } from "../../core/errors.js";

const uid = (): number | undefined => process.getuid?.();

/** Why `st` is not ours (a sentence), or undefined when it is. */
function notOurs(st: { uid: number; mode: number }): string | undefined {
  const me = uid();
  if (me !== undefined && st.uid !== me) return `it belongs to uid ${st.uid}, not to this server's user (uid ${me})`;
  if (st.mode & 0o022)
    return `it is writable by ${st.mode & 0o002 ? "every user" : "its group"} (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/** The state directory: ours or refused, with the fix in the message (checked at start-up). */
export async function assertOwnedDir(dir: string, what = "the state directory"): Promise<void> {
  const st = await lstat(dir);
  if (st.isSymbolicLink()) {
    const target = await stat(dir);
    if (!target.isDirectory()) throw new Error(`${what} ${dir} is not a directory`);
  } else if (!st.isDirectory()) throw new Error(`${what} ${dir} is not a directory`);
  const why = notOurs(await stat(dir));
  if (why) {
    throw new Error(
      `${what} ${dir} cannot be trusted: ${why}. Another user could replace the scripts sessions run. ` +
        `Fix: chown "$(id -u)" ${JSON.stringify(dir)} && chmod 700 ${JSON.stringify(dir)}, or set CLAUDE_SESSIONS_DIR to a directory of your own.`,
    );
  }
}

/**
 * Resolves the state directory once, at start-up (made 0700 when missing): its real path, which is the only one the
 * server uses afterwards, so a link naming it that is later pointed elsewhere changes nothing. The directory must be
 * ours (assertOwnedDir) and so must the way to it: every ancestor belongs to root or to the server's user and is not
 * writable by group or others, unless it is sticky (like /tmp: then nobody else may rename or remove the next
 * entry, which itself belongs to root or to us). Otherwise another user could swap a parent and the scripts in it.
 */
export async function resolveStateDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await assertOwnedDir(dir);
  const real = await realpath(dir);
  const me = uid();
  for (let a = dirname(real), prev = real; a !== prev; prev = a, a = dirname(a)) {
    const st = await lstat(a);
    const why =
      me !== undefined && st.uid !== 0 && st.uid !== me
        ? `it belongs to uid ${st.uid}, neither root nor this server's user (uid ${me})`
        : st.mode & 0o022 && !(st.mode & 0o1000)
          ? `it is writable by ${st.mode & 0o002 ? "every user" : "its group"} (mode ${(st.mode & 0o777).toString(8)}) and not sticky`
          : undefined;
    if (why) {
      throw new Error(
        `the state directory ${real} cannot be trusted: its parent ${a} is not safe: ${why}. Another user could swap the ` +
          `directories on the way and the scripts sessions run. ` +
          `Fix: set CLAUDE_SESSIONS_DIR to a directory whose every parent belongs to you or root and is writable by nobody else (or is sticky, like /tmp).`,
      );
    }
  }
  return real;
}

/**
 * Writes a script the server runs into its bin directory (unchanged files are left alone) and checks it is
 * ours. Used at start-up; `assertOwnedScript` repeats the check before each use.
 */
export async function installScript(binDir: string, name: string, text: string): Promise<string> {
  const p = join(binDir, name);
  const cur = await lstat(p).catch(() => undefined);
  const same = cur?.isFile() && !notOurs(cur) && (await readFile(p, "utf8")) === text;
  if (!same) {
    // A fresh file under a temporary name, renamed over whatever was there (even a planted symlink).
    const tmp = join(binDir, `.${name}.${process.pid}.${Date.now()}`);
    await writeFile(tmp, text, { mode: 0o700, flag: "wx" });
    await rename(tmp, p);
  }
  await chmod(p, 0o700);
  written.set(p, digest(text));
  await assertOwnedScript(p);
  return p;
}

/** What this process wrote into each script it installed (sha256): checked before every use. */
const written = new Map<string, string>();
const digest = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");

/**
 * A script about to be run: a regular file of ours in a directory of ours, with the content this server wrote.
 * Throws PERMISSION_DENIED otherwise.
 */
export async function assertOwnedScript(p: string): Promise<void> {
  for (const [path, kind] of [
    [dirname(p), "directory"],
    [p, "script"],
  ] as const) {
    const st = await lstat(path).catch(() => undefined);
    const why = !st ? "it is missing" : st.isSymbolicLink() ? "it is a symbolic link" : notOurs(st);
    if (why) {
      throw new SessionError("PERMISSION_DENIED", `the ${kind} ${path} cannot be trusted: ${why}; nothing was run.`, {
        suggestion: `Restart the server (it rewrites its scripts), and make the state directory yours alone: chmod 700 ${JSON.stringify(dirname(dirname(p)))}.`,
      });
    }
  }
  // Owner and mode are not enough: a session of this user that could edit the state directory could rewrite it.
  const want = written.get(p);
  if (want !== undefined && digest(await readFile(p)) !== want) {
    throw new SessionError(
      "PERMISSION_DENIED",
      `the script ${p} is not the one this server wrote (its content changed); nothing was run.`,
      {
        suggestion:
          "Restart the server (it rewrites its scripts), and keep the state directory out of every session's cwd and add_dirs.",
      },
    );
  }
}

export interface OwnedFile {
  path: string;
  dev: number;
  ino: number;
}

/**
 * Creates a session's log file at a caller's path: a new file (exclusive, mode 0600, no symbolic link
 * followed at the last step) in an existing directory that belongs to the server's user. An existing file
 * is refused: a log file is the session's own output, not a window onto the disk.
 */
export async function createOwnedFile(path: string, what = "log_file"): Promise<OwnedFile> {
  if (!path.startsWith("/"))
    throw new SessionError("INVALID_ARGUMENT", `${what} must be an absolute path (got ${JSON.stringify(path)}).`);
  if (path.includes("\0")) throw new SessionError("INVALID_ARGUMENT", `${what} contains a NUL character.`);
  const name = basename(path);
  if (!name || name === "." || name === ".." || path.endsWith("/"))
    throw new SessionError("INVALID_ARGUMENT", `${what} must name a file (got ${JSON.stringify(path)}).`);
  const parent = await realpath(dirname(path)).catch(() => undefined);
  const pst = parent ? await stat(parent).catch(() => undefined) : undefined;
  if (!parent || !pst?.isDirectory()) {
    throw new SessionError("INVALID_ARGUMENT", `the directory of ${what} ${JSON.stringify(path)} does not exist.`, {
      suggestion: "Create the directory first; the log file itself must not exist yet.",
    });
  }
  const me = uid();
  if (me !== undefined && pst.uid !== me) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the directory of ${what} ${JSON.stringify(path)} belongs to uid ${pst.uid}, not to this server's user.`,
      {
        suggestion: "Put the log file in a directory of your own.",
      },
    );
  }
  const full = join(parent, name);
  let fh;
  try {
    fh = await open(full, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ELOOP") {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `${what} ${JSON.stringify(path)} already exists; a session's log file must be new.`,
        {
          suggestion: "Choose a path that does not exist yet (the server creates it, readable by you alone).",
        },
      );
    }
    throw new SessionError("INVALID_ARGUMENT", `${what} ${JSON.stringify(path)} cannot be created: ${(e as Error).message}`);
  }
  try {
    const st = await fh.stat();
    return { path: full, dev: st.dev, ino: st.ino };
  } finally {
    await fh.close();
  }
}

/** Whether `path` is still the very file `f` names (not replaced, not a link to elsewhere). */
export async function isSameFile(path: string, f: { dev: number; ino: number }): Promise<boolean> {
  const st = await lstat(path).catch(() => undefined);
  return Boolean(st?.isFile() && st.dev === f.dev && st.ino === f.ino);
}

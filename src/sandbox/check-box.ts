/**
 * The confinement of a check that runs for a sandboxed session (issue 34): bubblewrap, as the session's own sandbox,
 * with a spec of its own — a check needs no Claude configuration, no proxies and no secrets' masks, so it gets none of
 * the launcher's (sandbox/launcher.ts) and no network at all (every namespace unshared: no interface but loopback,
 * no abstract socket of the host). The file system is the host's read-only; the places a check could reach the host
 * through (its temporary folders and runtime folders with their unix sockets: tmux, ssh-agent, docker), the user's
 * credentials and the server's state are hidden under empty folders (a file under /dev/null); the worktree is the one
 * place it may write, and a private /tmp that goes away with it. The repository's own git folder is put back
 * read-only when a mask hid it, so a check may run git; so is a check's program when it lives in a hidden temporary
 * folder (a Node or a clone under /tmp), with what it needs (programBinds).
 */
import { closeSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { resolveProgram } from "../util/proc/programs.js";

export interface CheckBox {
  /** bubblewrap by absolute path (the server's, never a session's PATH). */
  bwrap: string;
  /** The worktree: the check's cwd, and the only host folder it may write. */
  cwd: string;
  /** Folders hidden under an empty tmpfs (absolute, real paths). */
  hideDirs: string[];
  /** Files hidden under /dev/null (absolute, real paths). */
  hideFiles: string[];
  /** Folders put back read-only above the masks (the repository's git folder). */
  readOnly: string[];
  /** Hidden folders a check's program may be put back from: the temporary ones (real paths). */
  programsFrom?: string[];
  /** Places a folder put back may neither lie in nor hold: credentials, the state, runtime folders (real paths). */
  keepHidden?: string[];
}

/**
 * The command that runs `file args` in the box: bubblewrap's argv, the check's after `--` (never through a shell).
 * `programs`: what programBinds put back of the check's program, read-only.
 */
export function boxed(
  box: CheckBox,
  file: string,
  args: readonly string[],
  programs: readonly string[] = [],
): { file: string; args: string[] } {
  const a = ["--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const d of box.hideDirs) a.push("--tmpfs", d);
  for (const f of box.hideFiles) a.push("--ro-bind", "/dev/null", f);
  for (const d of [...box.readOnly, ...programs]) a.push("--ro-bind", d, d);
  a.push("--bind", box.cwd, box.cwd, "--chdir", box.cwd, "--", file, ...args);
  return { file: box.bwrap, args: a };
}

function inside(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The interpreter a script names on its `#!` line (`env NAME` looked up on `pathVar`), or undefined. */
function interpreterOf(file: string, pathVar: string | undefined): string | undefined {
  const buf = Buffer.alloc(256);
  let n = 0;
  try {
    const fd = openSync(file, "r");
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const head = buf.subarray(0, n).toString("latin1");
  if (!head.startsWith("#!")) return undefined;
  const words = head.slice(2).split("\n")[0]!.trim().split(/\s+/).filter(Boolean);
  if (!words[0]) return undefined;
  if (basename(words[0]) !== "env") return words[0];
  // env [-S] [NAME=value…] program: the first word that is neither an option nor an assignment.
  const name = words.slice(1).find((w) => !w.startsWith("-") && !w.includes("="));
  return name ? resolveProgram(name, pathVar) : undefined;
}

/** Whether a unix socket is in `dir` (its tree, links not followed); true as well past `budget` entries (unknown). */
function holdsSocket(dir: string, budget = 20_000): boolean {
  const stack = [dir];
  let seen = 0;
  while (stack.length) {
    const d = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > budget || e.isSocket()) return true;
      if (e.isDirectory()) stack.push(join(d, e.name));
    }
  }
  return false;
}

/**
 * What of a hidden temporary folder the check's program `file` needs put back (read-only) to run in the box: the
 * program (its path and its real path), and the interpreter its `#!` line names (found on `pathVar`, the check's
 * PATH, as `env` finds it in the box), each with its installation — the folder above its `bin/` (a Node with its
 * lib/, an npm package with its own files), else its own folder. An installation that is the hidden folder itself,
 * holds or lies in a place that stays hidden (credentials, the state), or holds a unix socket (a way out of the box)
 * is not put back: only the file is. Nothing is put back from a folder hidden for another reason (credentials).
 */
export function programBinds(box: CheckBox, file: string, pathVar: string | undefined): string[] {
  const from = box.programsFrom ?? [];
  const keep = box.keepHidden ?? [];
  const hidden = (p: string) => box.hideDirs.some((d) => inside(p, d)) || box.hideFiles.includes(p);
  const out = new Set<string>();
  const put = (p: string) => {
    if (!hidden(p)) return;
    const h = from.find((d) => inside(p, d) && p !== d);
    if (!h || keep.some((k) => inside(p, k))) return;
    let root = dirname(p);
    if (basename(root) === "bin") root = dirname(root);
    const fits = inside(root, h) && root !== h && !keep.some((k) => inside(k, root) || inside(root, k)) && !holdsSocket(root);
    out.add(fits ? root : p);
  };
  let next: string | undefined = file;
  // A script's interpreter may be a script too (a wrapper): a few levels, never a loop.
  for (let depth = 0; next && depth < 4; depth++) {
    const p: string = next;
    put(p);
    const r = real(p);
    if (r && r !== p) put(r);
    next = interpreterOf(p, pathVar);
    if (next === p) break;
  }
  // Outermost first; a folder inside one already put back adds nothing.
  const all = [...out].sort((a, b) => a.length - b.length);
  return all.filter((p, i) => !all.slice(0, i).some((o) => inside(p, o)));
}

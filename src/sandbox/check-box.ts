/**
 * The confinement of a check that runs for a sandboxed session (issue 34): bubblewrap, as the session's own sandbox,
 * with a spec of its own — a check needs no Claude configuration, no proxies and no secrets' masks, so it gets none of
 * the launcher's (sandbox/launcher.ts) and no network at all (every namespace unshared: no interface but loopback,
 * no abstract socket of the host). The file system is the host's read-only; the places a check could reach the host
 * through (its temporary folders and runtime folders with their unix sockets: tmux, ssh-agent, docker), the user's
 * credentials and the server's state are hidden under empty folders (a file under /dev/null); the worktree is the one
 * place it may write, and a private /tmp that goes away with it. The repository's own git folder is put back
 * read-only when a mask hid it, so a check may run git.
 */

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
}

/** The command that runs `file args` in the box: bubblewrap's argv, the check's after `--` (never through a shell). */
export function boxed(box: CheckBox, file: string, args: readonly string[]): { file: string; args: string[] } {
  const a = ["--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
  for (const d of box.hideDirs) a.push("--tmpfs", d);
  for (const f of box.hideFiles) a.push("--ro-bind", "/dev/null", f);
  for (const d of box.readOnly) a.push("--ro-bind", d, d);
  a.push("--bind", box.cwd, box.cwd, "--chdir", box.cwd, "--", file, ...args);
  return { file: box.bwrap, args: a };
}

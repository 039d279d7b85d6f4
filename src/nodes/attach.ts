/**
 * attach_command of a session on a node: the operator's `attach` prefix (e.g. ssh -t host --) followed by a tmux
 * attach this server builds itself. A node's words never become part of a local command: the node's attach_command
 * is only read for its tmux socket (`-S <path>` or `-L <name>`, a plain word that does not start with `-`), checked
 * to name the session's own tmux session (`=cs-<id>`), and the line is rebuilt from those parts. Anything else (an
 * option, shell syntax, another session) and the session has no attach_command through the coordinator.
 */

/** The words of a command line made of plain words and '…'-quoted ones (shQuote's form); undefined otherwise. */
export function splitQuoted(s: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] === " ") {
      i++;
      continue;
    }
    let word = "";
    while (i < s.length && s[i] !== " ") {
      if (s[i] === "'") {
        const end = s.indexOf("'", i + 1);
        if (end < 0) return undefined;
        word += s.slice(i + 1, end);
        i = end + 1;
      } else if (s[i] === "\\" && s[i + 1] === "'") {
        word += "'";
        i += 2;
      } else if (/[A-Za-z0-9_@%+=:,./-]/.test(s[i]!)) {
        word += s[i++];
      } else return undefined;
    }
    out.push(word);
  }
  return out;
}

/** A word as a shell reads it back: bare when it is plain, single-quoted otherwise. */
export function displayWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/**
 * A word a node may give for its tmux socket: plain (the same word to a remote shell and to an argv), not an option.
 * The session id is checked by the caller's schema; this is only for the socket.
 */
const SOCKET_WORD = /^[A-Za-z0-9_@%+=:,./][A-Za-z0-9_@%+=:,./-]{0,1023}$/;
const SESSION_WORD = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

/**
 * The tmux attach of session `id` as the node reports it (`tmux [-S path | -L name] attach -t =cs-<id>`), parsed
 * into the argv this server runs: undefined when it is anything else.
 */
export function tmuxAttachOf(nodeCommand: string, id: string): string[] | undefined {
  if (!SESSION_WORD.test(id)) return undefined;
  const w = splitQuoted(nodeCommand);
  if (!w || w[0] !== "tmux") return undefined;
  let socket: string[] = [];
  let rest = w.slice(1);
  if (rest[0] === "-S" || rest[0] === "-L") {
    const value = rest[1];
    if (value === undefined || !SOCKET_WORD.test(value)) return undefined;
    socket = [rest[0], value];
    rest = rest.slice(2);
  }
  if (rest.length !== 3 || rest[0] !== "attach" || rest[1] !== "-t" || rest[2] !== `=cs-${id}`) return undefined;
  return ["tmux", ...socket, "attach", "-t", `=cs-${id}`];
}

/** The argv that attaches to session `id` on the node (prefix + rebuilt tmux attach), or undefined. */
export function remoteAttachArgv(prefix: readonly string[] | undefined, nodeCommand: string, id: string): string[] | undefined {
  if (!prefix?.length) return undefined;
  const tmux = tmuxAttachOf(nodeCommand, id);
  return tmux ? [...prefix, ...tmux] : undefined;
}

/** The paste-ready command, or undefined when the node has no attach prefix or its command is not a plain tmux attach. */
export function remoteAttach(prefix: readonly string[] | undefined, nodeCommand: string, id: string): string | undefined {
  return remoteAttachArgv(prefix, nodeCommand, id)?.map(displayWord).join(" ");
}

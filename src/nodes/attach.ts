/**
 * attach_command of a session on a node: the node's `attach` prefix (e.g. ssh -t host --) followed by the exact
 * tmux attach the node reports, ready to paste into a shell. The node's command is split back into its argv (it is
 * made of plain words and shQuote'd ones) and every word is quoted for display only; nothing runs it here.
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

/** The paste-ready command, or undefined when the node has no attach prefix (its own command would run here). */
export function remoteAttach(prefix: readonly string[] | undefined, nodeCommand: string): string | undefined {
  if (!prefix?.length) return undefined;
  const argv = splitQuoted(nodeCommand);
  return argv ? [...prefix, ...argv].map(displayWord).join(" ") : undefined;
}

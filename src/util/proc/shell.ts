/**
 * Quoting for the few strings that another program hands to /bin/sh (Claude's hook commands,
 * tmux's pipe-pane and run-shell). Our own processes are always started from argv arrays.
 */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Paths that go into such strings (only ever the server's own: the state directory and what it makes under
 * it) must not carry characters tmux or sh would reinterpret: quotes, `#` (tmux formats), `$`, `;` (a tmux
 * command separator at the end of an argument), backquotes, backslashes, control characters.
 */
export function isSafePath(p: string): boolean {
  return p.startsWith("/") && !/[\x00-\x1f\x7f"'#$;`\\]/.test(p);
}

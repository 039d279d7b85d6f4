/**
 * Quoting for the few strings that another program hands to /bin/sh (Claude's hook commands,
 * tmux's pipe-pane and run-shell). Our own processes are always started from argv arrays.
 */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Paths that go into such strings must not carry characters tmux or sh would reinterpret. */
export function isSafePath(p: string): boolean {
  return p.startsWith("/") && !/[\n\r\0"#$`\\]/.test(p);
}

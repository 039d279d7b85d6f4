/**
 * Raw terminal output, bounded. Past `max` bytes the file is copied to FILE.1 (the one archive kept) and emptied
 * in place: the inode stays, so a writer appending (O_APPEND) and a log_file link keep working; stream_output
 * notices the file got shorter than its cursor and reads it again from the start.
 */
import { copyFile, truncate } from "node:fs/promises";
import { shQuote } from "../../util/proc/shell.js";
import { toolPaths, type ToolPaths } from "../../util/proc/tools.js";

/** CLAUDE_SESSIONS_OUTPUT_LOG_MAX_BYTES default: 64 MiB of raw output per session (plus one archive). */
export const OUTPUT_LOG_MAX_BYTES = 64 * 1024 * 1024;

/**
 * tmux's pipe-pane runs this with the pane's output on stdin: `capture.sh FILE MAX`. GNU split cuts the stream
 * into pieces of MAX bytes as it arrives (nothing waits for a newline: a process's last words are on disk at
 * once) and hands each piece to `capture.sh --rotate FILE`, which, from the second piece on, copies FILE to
 * FILE.1, empties it, and appends the piece. FILE and the script's own path are paths the server made under its
 * state directory, which cannot hold a quote.
 */
export function captureScript(t: ToolPaths = toolPaths()): string {
  return `#!${t.sh}
# claude-sessions: append a terminal's raw output (stdin) to FILE; every MAX bytes, FILE is copied to FILE.1 and emptied.
#   capture.sh FILE MAX
umask 077
if [ "$1" = --rotate ]; then
  f=$2
  case $FILE in *.aa) ;; *) ${shQuote(t.cp)} -f -- "$f" "$f.1" 2>/dev/null; : > "$f" ;; esac
  exec ${shQuote(t.cat)} >> "$f"
fi
f=$1 max=$2
exec ${shQuote(t.split)} -b "$max" --filter="exec '$0' --rotate '$f'" - "$f.piece."
`;
}
export const CAPTURE_SH = captureScript();

/** The same rotation for a file this process appends to itself (the pty backend's raw log). */
export async function rotate(path: string): Promise<void> {
  await copyFile(path, `${path}.1`);
  await truncate(path, 0);
}

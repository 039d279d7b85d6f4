/**
 * Raw terminal output, bounded. Past `max` bytes the file is copied to FILE.1 (the one archive kept) and emptied
 * in place: the inode stays, so a writer appending (O_APPEND) and a log_file link keep working; stream_output
 * notices the file got shorter than its cursor and reads it again from the start.
 */
import { copyFile, truncate } from "node:fs/promises";

/** CLAUDE_SESSIONS_OUTPUT_LOG_MAX_BYTES default: 64 MiB of raw output per session (plus one archive). */
export const OUTPUT_LOG_MAX_BYTES = 64 * 1024 * 1024;

/**
 * tmux's pipe-pane runs this with the pane's output on stdin: `capture.sh FILE MAX`. awk appends each line and
 * flushes it (a reader sees it at once), counts the bytes (starting from the file's size), and rotates. FILE is
 * a path the server made under its state directory (no quote can occur in it); \047 is awk's single quote.
 */
export const CAPTURE_SH = `#!/bin/sh
# claude-sessions: append a terminal's raw output (stdin) to FILE; past MAX bytes, FILE is copied to FILE.1 and emptied.
#   capture.sh FILE MAX
exec awk -v f="$1" -v max="$2" '
  BEGIN { n = 0; cmd = "wc -c < \\047" f "\\047 2>/dev/null"; cmd | getline n; close(cmd); n += 0 }
  { print >> f; fflush(f); n += length($0) + 1
    if (n > max) { close(f); system("cp -f \\047" f "\\047 \\047" f ".1\\047 && : > \\047" f "\\047"); n = 0 } }'
`;

/** The same rotation for a file this process appends to itself (the pty backend's raw log). */
export async function rotate(path: string): Promise<void> {
  await copyFile(path, `${path}.1`);
  await truncate(path, 0);
}

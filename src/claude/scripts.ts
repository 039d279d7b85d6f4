/**
 * The event-append script the server writes into `<state dir>/bin/` (with the tmux backend's launch.sh and
 * capture.sh, see src/backends/) and points sessions at. They live in
 * the state directory (not the package) so a live session keeps working when the package moves.
 */

/**
 * Appends one event line to an events log under flock, so concurrent hooks never interleave.
 * Runs inside Claude's loop (hooks are synchronous): sh + flock + paste, a few milliseconds.
 * Lines are joined (JSON escapes newlines inside strings, so only formatting goes); every record starts
 * with a newline (so it begins on a fresh line whatever a killed writer left) and ends with one: exactly
 * one line per event, the format of the hook command in hooks.ts. It prints nothing.
 *   hook.sh EVENTS                 payload on stdin
 *   hook.sh EVENTS exit CODE [GEN] the terminal's process of spawn generation GEN ended (tmux pane-died, launcher)
 */
export const HOOK_SH = `#!/bin/sh
# claude-sessions: append one event line to a session's events log. Keep it cheap.
f=$1
if [ "$2" = exit ]; then
  case $3 in ''|*[!0-9]*) c=null ;; *) c=$3 ;; esac
  case $4 in ''|*[!0-9]*) g= ;; *) g=",\\"generation\\":$4" ;; esac
  printf '\\n{"hook_event_name":"cs:exit","exit_code":%s%s}\\n' "$c" "$g" | flock -w 10 "$f.lock" sh -c 'cat >> "$0"' "$f" 2>/dev/null
  exit 0
fi
exec flock -w 10 "$f.lock" paste -s -d '\\0' /dev/null - >> "$f" 2>/dev/null
`;

export interface ScriptPaths {
  hook: string;
  launch: string;
  /** The tmux backend's bounded raw-log writer (backends/capture.ts). */
  capture: string;
}

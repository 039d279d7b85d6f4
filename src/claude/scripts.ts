/**
 * The event-append script the server writes into `<state dir>/bin/` (with the tmux backend's launch.sh and
 * capture.sh, see src/runners/terminal/) and points sessions at. They live in
 * the state directory (not the package) so a live session keeps working when the package moves.
 */
import { DEFAULT_PERMISSION_TIMEOUT_MS } from "../core/modes.js";
import { toolPaths, type ToolPaths } from "../util/proc/tools.js";
import { shQuote } from "../util/proc/shell.js";

/**
 * Appends one event line to an events log under flock, so concurrent hooks never interleave.
 * Runs inside Claude's loop (hooks are synchronous): sh + flock + paste, a few milliseconds.
 * Lines are joined (JSON escapes newlines inside strings, so only formatting goes); every record starts
 * with a newline (so it begins on a fresh line whatever a killed writer left) and ends with one: exactly
 * one line per event, the format of the hook command in hooks.ts. It prints nothing. Every program it calls is
 * named by the absolute path found when the server started (util/proc/tools.ts): it runs in the session's environment.
 *   hook.sh EVENTS                 payload on stdin
 *   hook.sh EVENTS exit CODE [GEN] the terminal's process of spawn generation GEN ended (tmux pane-died, launcher)
 */
export function hookScript(t: ToolPaths = toolPaths()): string {
  const q = (k: keyof ToolPaths) => shQuote(t[k]);
  // One line appended to the events log under its lock (cat through sh, so the log is opened after the lock is held).
  const lockedCat = `${q("flock")} -w 10 "$f.lock" ${q("sh")} -c ${shQuote(`${shQuote(t.cat)} >> "$0"`)} "$f"`;
  return `#!${t.sh}
# claude-sessions: append one event line to a session's events log. Keep it cheap.
umask 077
f=$1
if [ "$2" = exit ]; then
  case $3 in ''|*[!0-9]*) c=null ;; *) c=$3 ;; esac
  case $4 in ''|*[!0-9]*) g= ;; *) g=",\\"generation\\":$4" ;; esac
  printf '\\n{"hook_event_name":"cs:exit","exit_code":%s%s}\\n' "$c" "$g" | ${lockedCat} 2>/dev/null
  exit 0
fi
exec ${q("flock")} -w 10 "$f.lock" ${q("paste")} -s -d '\\0' /dev/null - >> "$f" 2>/dev/null
`;
}
export const HOOK_SH = hookScript();

/**
 * The blocking PermissionRequest hook of tmux and pty sessions (the permission channel). It appends the request's
 * event line like hook.sh, with one field added: `cs_request`, a key it makes from its pid and the clock. Then it
 * waits (at most TIMEOUT_MS) for the server's decision file `DECISIONS/<key>.json`, prints that file (the
 * `hookSpecificOutput` the CLI reads) and removes it. On time-out it appends `cs:permission_fallback` with the key
 * and exits 0 printing nothing: Claude falls back to its dialog. Its stdout is the decision or nothing; its
 * arguments are server-made paths and digits, the payload never meets a shell. Polls every 20 ms for 2 s, then
 * every 100 ms.
 *   permission.sh EVENTS DECISIONS TIMEOUT_MS   payload on stdin
 */
export function permissionScript(t: ToolPaths = toolPaths()): string {
  const q = (k: keyof ToolPaths) => shQuote(t[k]);
  // One line appended to the events log under its lock (cat through sh, so the log is opened after the lock is held).
  const lockedCat = `${q("flock")} -w 10 "$f.lock" ${q("sh")} -c ${shQuote(`${shQuote(t.cat)} >> "$0"`)} "$f"`;
  return `#!${t.sh}
# claude-sessions: a PermissionRequest hook that waits for the server's decision. Prints only that decision.
exec 2>/dev/null
umask 077
f=$1 d=$2
case $3 in ''|*[!0-9]*) t=${DEFAULT_PERMISSION_TIMEOUT_MS} ;; *) t=$3 ;; esac
k="r$$"x"$(${q("date")} +%s%N)"
case $k in *[!a-zA-Z0-9]*) k="r$$"x"$(${q("date")} +%s)" ;; esac
${q("sed")} '1s/^[[:space:]]*{/{"cs_request":"'"$k"'",/' | ${q("flock")} -w 10 "$f.lock" ${q("paste")} -s -d '\\0' /dev/null - >> "$f"
w=0 s=0.02 n=20
while [ ! -f "$d/$k.json" ]; do
  if [ "$w" -ge "$t" ]; then
    printf '\\n{"hook_event_name":"cs:permission_fallback","cs_request":"%s"}\\n' "$k" | ${lockedCat}
    exit 0
  fi
  ${q("sleep")} $s || exit 0
  w=$((w + n))
  [ "$w" -ge 2000 ] && s=0.1 n=100
done
${q("cat")} -- "$d/$k.json"
${q("rm")} -f -- "$d/$k.json"
exit 0
`;
}
export const PERMISSION_SH = permissionScript();

export interface ScriptPaths {
  hook: string;
  launch: string;
  /** The tmux backend's bounded raw-log writer (runners/terminal/capture.ts). */
  capture: string;
  /** The blocking PermissionRequest hook (PERMISSION_SH). */
  permission: string;
}

/**
 * The tmux backend's launcher. tmux is given only fixed strings the server made (the launcher's path and a
 * hand-off file's path in the session's own directory); everything that came from a caller — the working
 * directory, the program's argv and its environment — travels in the hand-off file, which the launcher reads
 * and deletes before it starts anything. So no caller's string ever meets tmux's command or format parser
 * (`;` separators, `#{…}` and `#(…)` expansion) or a shell, and secrets never travel on a command line.
 *
 * The hand-off file is a list of NUL-terminated records `<tag>:<value>`: C (working directory), E (events
 * log), G (spawn generation), A (one argv element, in order), V (one NAME=value of the environment). NUL is the only byte a
 * path, an argument or a variable cannot hold, so every other byte arrives exactly.
 *
 * The launcher runs the program as its child and waits, then appends the exit status to the events log
 * itself: tmux 3.3 can miss the SIGCHLD that would run pane-died (tmux/tmux#311). It traps HUP/INT/TERM with
 * a no-op handler (a handler, not an ignore, so the program keeps default signal handling) to outlive the
 * program long enough to write that line. tmux's own TERM/TMUX/TMUX_PANE are kept. bash and the programs it calls
 * are named by the absolute paths found at server start (util/proc/tools.ts).
 *   launch.sh HANDOFF
 */
import { ENV_NAME } from "../../../util/proc/env.js";
import { shQuote } from "../../../util/proc/shell.js";
import { toolPaths, type ToolPaths } from "../../../util/proc/tools.js";

export function launchScript(t: ToolPaths = toolPaths()): string {
  return `#!${t.bash}
# claude-sessions launcher: read the hand-off file, delete it, enter the directory, run the program, record its exit.
handoff=$1
# tmux runs this by its absolute path (<state>/bin/launch.sh): hook.sh is beside it, found without a process.
hook=\${0%/*}/hook.sh
cwd= events= gen= argv=() kv=()
while IFS= read -r -d '' rec; do
  case $rec in
    C:*) cwd=\${rec#C:} ;;
    E:*) events=\${rec#E:} ;;
    G:*) gen=\${rec#G:} ;;
    A:*) argv+=("\${rec#A:}") ;;
    V:*) kv+=("\${rec#V:}") ;;
  esac
done < "$handoff"
${shQuote(t.rm)} -f -- "$handoff"
keep_term=$TERM keep_tmux=$TMUX keep_pane=$TMUX_PANE
for v in $(compgen -e); do unset "$v" 2>/dev/null; done
for line in "\${kv[@]}"; do export "$line"; done
[ -n "$keep_term" ] && [ -z "$TERM" ] && export TERM="$keep_term"
[ -n "$keep_tmux" ] && export TMUX="$keep_tmux"
[ -n "$keep_pane" ] && export TMUX_PANE="$keep_pane"
unset kv line keep_term keep_tmux keep_pane handoff v rec
trap ':' HUP INT TERM QUIT
if [ \${#argv[@]} -eq 0 ]; then
  echo "claude-sessions: the hand-off file was empty or unreadable" >&2; code=127
elif cd -- "$cwd"; then
  "\${argv[@]}"; code=$?
else
  code=126
fi
[ -n "$events" ] && "$hook" "$events" exit "$code" $gen
exit "$code"
`;
}
export const LAUNCH_SH = launchScript();

export interface Handoff {
  cwd: string;
  eventsPath: string;
  /** The spawn generation, written with the exit so a late exit of an older process is ignored. */
  generation?: number;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
}

/** Encodes a hand-off for LAUNCH_SH. Throws on what cannot travel (NUL, a bad variable name, no program). */
export function encodeHandoff(h: Handoff): string {
  if (!h.argv.length) throw new Error("nothing to run: argv is empty");
  const rec: string[] = [
    `C:${h.cwd}`,
    `E:${h.eventsPath}`,
    ...(h.generation !== undefined ? [`G:${Math.trunc(h.generation)}`] : []),
    ...h.argv.map((a) => `A:${a}`),
  ];
  for (const [k, v] of Object.entries(h.env)) {
    if (!ENV_NAME.test(k)) throw new Error(`environment name ${JSON.stringify(k)} is not a valid variable name`);
    rec.push(`V:${k}=${v}`);
  }
  for (const r of rec) if (r.includes("\0")) throw new Error("a hand-off value contains a NUL character");
  return rec.map((r) => `${r}\0`).join("");
}

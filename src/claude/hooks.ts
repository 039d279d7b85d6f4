/**
 * The per-session settings file that makes Claude Code report every state change to our log.
 */
import { dirname } from "node:path";
import { HOOK_EVENTS, type HookEventName } from "../core/events.js";
import { shQuote } from "../util/proc/shell.js";
import { toolPaths, type ToolPaths } from "../util/proc/tools.js";

/**
 * The command Claude runs (through sh) for every hook event, inside its own loop, so it must be cheap: sh execs
 * flock, which takes the log's lock and runs paste with stdout appending to the log. `paste -s -d '\0'` joins the
 * payload's lines (JSON escapes newlines inside strings, so only formatting goes) and ends it with exactly one
 * newline: one whole line per event, never interleaved. The empty file /dev/null before the payload makes paste
 * start with a newline of its own, so an event always begins on a fresh line even when a writer killed half-way
 * left a torn line behind (the reader skips the blank lines). It prints nothing (a hook's stdout becomes context
 * for Claude) and exits 0 unless the lock cannot be had in 10 s (a non-blocking hook error). Same format as hook.sh.
 * umask 077: a lock or log it creates is the owner's alone. flock and paste are named by the absolute paths found at
 * server start: the command runs in Claude's environment,
 * whose PATH a caller's `env` could otherwise point at programs of its own.
 */
export function hookCommand(eventsPath: string, t: ToolPaths = toolPaths()): string {
  return (
    `umask 077; exec ${shQuote(t.flock)} -w 10 ${shQuote(eventsPath + ".lock")} ${shQuote(t.paste)} -s -d '\\0' /dev/null ` +
    `- >> ${shQuote(eventsPath)} 2>/dev/null`
  );
}

/*
 * UserPromptSubmit in the background, the log still in order (issue 38).
 *
 * A synchronous UserPromptSubmit hook holds every turn of the interactive CLI ~20 ms before its API request (the
 * floor alone, 12 × 3 follow-ups: 204 ms with it synchronous, 181 ms with `async: true`). In the background its line
 * could land after the turn's next events, so the events that can follow it in the same turn wait for it instead,
 * at no cost when it is already in (the usual case: an API round trip lies between them):
 * - the prompt's hook (`async: true`) appends the payload under the log's lock, then writes the payload's
 *   `prompt_id` to `<events>.prompt` (while still holding the lock);
 * - the turn's later events that can come first in the turn (PreToolUse, PermissionDenied, Stop, StopFailure;
 *   PostToolUse, PermissionRequest and Notification come after one of them) read their own `prompt_id` and, when
 *   `<events>.prompt` names another, wait for it (PROMPT_WAIT_TRIES × 5 ms at most), then append. A turn that had no
 *   UserPromptSubmit waits once, ~0.3 s: a bash-mode line's Stop (2.1.197, 2.1.330, 2.1.332), a prompt the CLI
 *   queued during a turn (it fires with the running turn's id), a hook that died. The waiting hook then names it
 *   itself. /clear and /compact fire no UserPromptSubmit and their SessionStart stays synchronous.
 * Both are one `sh` (the CLI's own `sh -c`) with a `cat` and a `flock` on a descriptor the shell holds, as cheap as
 * the plain command above: 2.5–3.2 ms against 2.9–4.0 ms for a 30 KB Stop payload (300 runs each).
 *
 * The id is taken from the payload's text: the first `"prompt_id":"` of the compact JSON the CLI writes, when
 * nothing before it is a prompt or a tool's input (a string cannot hold an unescaped quote, and every payload
 * seen puts `prompt_id` right after `session_id`, `transcript_path` and `cwd`), and only if it is letters, digits,
 * `-` and `_`. A payload without one (another CLI, pretty-printed JSON) is appended at once, as before. The fold
 * takes a UserPromptSubmit that still lands after its turn's end without reopening the turn (events/reducer.ts).
 */

/** How many 5 ms naps a turn's event waits for its prompt's line at most (~0.3 s with the naps' own cost). */
export const PROMPT_WAIT_TRIES = 50;

/** Where the last prompt whose line is in the log is named, beside the log (`<events>.prompt`). */
export function promptMarkPath(eventsPath: string): string {
  return `${eventsPath}.prompt`;
}

/**
 * The shell text both commands start with: the payload read whole into `x`, its `prompt_id` into `p` (empty when
 * there is none to trust), the log's path in `f`.
 */
function readPayload(eventsPath: string, t: ToolPaths): string {
  return (
    `umask 077; f=${shQuote(eventsPath)}; x=$(${shQuote(t.cat)}); p=; ` +
    `case $x in *'"prompt_id":"'*) case \${x%%'"prompt_id":"'*} in *'"prompt"'*|*'"tool_input"'*) ;; ` +
    `*) p=\${x#*'"prompt_id":"'}; p=\${p%%'"'*} ;; esac ;; esac; ` +
    `case $p in *[!A-Za-z0-9_-]*) p= ;; esac; `
  );
}

/**
 * The log's lock taken on descriptor 9 (held until the shell exits), then the payload appended as one line that
 * starts on a fresh line (the format of the plain command: a payload with line breaks is joined by paste).
 */
function lockedAppend(t: ToolPaths): string {
  return (
    `exec 9>>"$f.lock"; ${shQuote(t.flock)} -w 10 9 2>/dev/null || exit 1; ` +
    `case $x in *'\n'*) printf '%s' "$x" | ${shQuote(t.paste)} -s -d '\\0' /dev/null - ;; ` +
    `*) printf '\\n%s\\n' "$x" ;; esac >> "$f" 2>/dev/null; `
  );
}

/** UserPromptSubmit's command (run with `async: true`): its line, then its id in `<events>.prompt`; deaf to a hangup. */
export function promptHookCommand(eventsPath: string, t: ToolPaths): string {
  // Nothing waits for it, so its process may outlive the CLI's: a CLI that dies right after taking the prompt takes
  // its terminal with it, and the hangup must not take the prompt's line too (ignored signals stay ignored in cat,
  // flock and paste).
  return (
    `trap '' HUP; ` +
    readPayload(eventsPath, t) +
    lockedAppend(t) +
    `[ -z "$p" ] || printf '%s' "$p" > ${shQuote(promptMarkPath(eventsPath))} 2>/dev/null; exit 0`
  );
}

/** The command of a turn's event that may come right after UserPromptSubmit: waits for that line, then appends. */
export function orderedHookCommand(eventsPath: string, t: ToolPaths): string {
  const mark = shQuote(promptMarkPath(eventsPath));
  return (
    readPayload(eventsPath, t) +
    `if [ -n "$p" ]; then i=0; ` +
    `until m=; [ -r ${mark} ] && read -r m < ${mark}; [ "$m" = "$p" ] || [ $i -ge ${PROMPT_WAIT_TRIES} ]; ` +
    `do i=$((i+1)); ${shQuote(t.sleep)} 0.005; done; ` +
    `[ "$m" = "$p" ] || printf '%s' "$p" > ${mark} 2>/dev/null; fi; ` +
    lockedAppend(t) +
    `exit 0`
  );
}

/** The folder of a session's directory where the server writes permission decisions for its hook. */
export const DECISIONS_DIR = "decisions";

/** The permission channel of a terminal session: the blocking hook, where its decisions land, how long it waits. */
export interface PermissionHook {
  /** `<state>/bin/permission.sh` (PERMISSION_SH). */
  script: string;
  /** `<state>/<id>/decisions`: the server writes `<request key>.json` there. */
  decisionsDir: string;
  timeoutMs: number;
}

/** The PermissionRequest hook that waits for the server's decision; Claude's own hook timeout (seconds) is longer. */
export function permissionHookEntry(
  eventsPath: string,
  p: PermissionHook,
): { type: "command"; command: string; timeout: number } {
  const ms = Math.max(0, Math.floor(p.timeoutMs));
  return {
    type: "command",
    command: `exec ${shQuote(p.script)} ${shQuote(eventsPath)} ${shQuote(p.decisionsDir)} ${ms}`,
    timeout: Math.ceil(ms / 1000) + 30,
  };
}

/**
 * Permission rules that keep a session's file tools off the server's own files, whatever its permission mode
 * (deny wins over every allow, and holds in acceptEdits and bypassPermissions): no Edit (which covers Write,
 * MultiEdit and NotebookEdit) of the scripts (bin/) and of node's compile cache (compile-cache/: code a server start
 * runs), of the top-level files (state.json, the databases, the HTTP
 * token) or of any session's files (settings.json, events, logs, permission decisions), and no Read of the token.
 * Not the worktrees the server makes under <state>/worktrees/<id>: a session edits its own checkout. `//` starts
 * an absolute path in the CLI's rule syntax; the state directory is the session's events path's grandparent
 * (<state>/<id>/events.jsonl). Session ids have no dot, so `*.*` never names a session's or a worktree's folder.
 * Shell commands are not covered by these rules (Bash asks unless allowed).
 */
export function stateDenyRules(eventsPath: string): string[] {
  const s = "/" + dirname(dirname(eventsPath)).replace(/[*?[\]!()]/g, "\\$&");
  const edit = [`${s}/*.*`, `${s}/token`, `${s}/bin/**`, `${s}/compile-cache/**`, `${s}/*/*.*`, `${s}/*/decisions/**`].map(
    (p) => `Edit(${p})`,
  );
  return [...edit, `Read(${s}/token)`];
}

/**
 * The SessionStart sources whose line nothing waits on and whose place in the log does not matter: a new process's
 * start and a resume. Their hook runs in the background (`async: true`, in every supported CLI since 2.1.197), so
 * the CLI does not hold its first prompt (the one on its command line) for it. A late line cannot undo a turn: the
 * fold takes such a SessionStart only while the session is still `starting`. /clear and /compact keep theirs
 * synchronous: a reset or a compaction waits for its SessionStart and the turn that follows must come after it.
 * Only for the interactive CLI (tmux, pty: `backgroundStart`): under the Agent SDK (headless) a fork's background
 * SessionStart never reached the log (2.1.330, tests/e2e/session-life.test.ts), and a headless first prompt waits
 * for no SessionStart anyway (it is in the SDK's input from the spawn).
 */
export const BACKGROUND_SESSION_STARTS = "startup|resume";
const ORDERED_SESSION_STARTS = "clear|compact";

/**
 * The events a headless session's CLI reports to the Agent SDK's in-process hook callbacks (HeadlessSession) instead
 * of a hook command: every one but the process's start and end. No callback receives SessionStart (none fired on
 * 2.1.197, 2.1.330 or 2.1.332: the CLI runs it before the SDK's initialize registers the callbacks), and SessionEnd
 * comes as the SDK's channel closes; both stay commands, off the turn's path.
 */
export const CALLBACK_EVENTS: readonly HookEventName[] = HOOK_EVENTS.filter((e) => e !== "SessionStart" && e !== "SessionEnd");

/**
 * A headless session's hook set: the turn's events as callbacks (CALLBACK_EVENTS), SessionEnd a command, and
 * SessionStart a command only for /clear and /compact. A new or resumed process's start is written by
 * HeadlessSession when the CLI answers the SDK's initialize: a SessionStart command on the CLI's start-up path cost a
 * `claude -p`-like turn 7–96 ms (2.1.330, scripts/bench/task-floor.mjs, three passes, issue 38), even in the
 * background (`async: true`: the CLI still forks it while it starts), and nothing waits on that line.
 */
export const HEADLESS_HOOKS = { callbacks: CALLBACK_EVENTS, startFromHost: true } as const;

/**
 * The turn's events that can come right after UserPromptSubmit when its hook runs in the background: they wait for
 * its line (see "UserPromptSubmit in the background" above). PostToolUse, PermissionRequest and Notification come after one of them.
 */
export const AFTER_PROMPT: readonly HookEventName[] = ["PreToolUse", "PermissionDenied", "Stop", "StopFailure"];

export function hooksSettings(
  eventsPath: string,
  permission?: PermissionHook,
  opts: {
    backgroundStart?: boolean;
    /** UserPromptSubmit in the background, the turn's next events in line after it (see "UserPromptSubmit in the background" above). */
    backgroundPrompt?: boolean;
    callbacks?: readonly HookEventName[];
    startFromHost?: boolean;
  } = {},
): { permissions: { deny: string[] }; hooks: Record<string, unknown> } {
  const command = hookCommand(eventsPath);
  const t = toolPaths();
  const hooks: Record<string, unknown> = {};
  for (const ev of HOOK_EVENTS) {
    if (opts.callbacks?.includes(ev)) continue;
    if (opts.backgroundPrompt && ev === "UserPromptSubmit") {
      hooks[ev] = [{ matcher: "*", hooks: [{ type: "command", command: promptHookCommand(eventsPath, t), async: true }] }];
      continue;
    }
    if (opts.backgroundPrompt && AFTER_PROMPT.includes(ev)) {
      hooks[ev] = [{ matcher: "*", hooks: [{ type: "command", command: orderedHookCommand(eventsPath, t) }] }];
      continue;
    }
    if (ev === "SessionStart" && opts.startFromHost) {
      hooks[ev] = [{ matcher: ORDERED_SESSION_STARTS, hooks: [{ type: "command", command }] }];
      continue;
    }
    if (ev === "SessionStart" && opts.backgroundStart) {
      hooks[ev] = [
        { matcher: BACKGROUND_SESSION_STARTS, hooks: [{ type: "command", command, async: true }] },
        { matcher: ORDERED_SESSION_STARTS, hooks: [{ type: "command", command }] },
      ];
      continue;
    }
    const entry =
      ev === "PermissionRequest" && permission ? permissionHookEntry(eventsPath, permission) : { type: "command", command };
    hooks[ev] = [{ matcher: "*", hooks: [entry] }];
  }
  return { permissions: { deny: stateDenyRules(eventsPath) }, hooks };
}

/**
 * Claude Code's own background sessions (`claude --bg`): list_sessions {include_native} shows them read-only, and
 * send_message {native_session_id} gives one a prompt through the CLI's public commands (claude/native.ts): a stopped
 * one is continued with `claude --bg --resume`, a running idle one gets the prompt typed through `claude attach <id>`
 * in a private terminal of this server (as a person attaching would), which is then closed; the session goes on.
 * Nothing reads or writes the CLI's private files. A busy or waiting session is refused: typing there would answer
 * its dialog. The permission-mode gates hold as for the server's own sessions: a stopped one is continued in the
 * server's default mode (checked like a start without permission_mode), never in a mode it saved; a running one is
 * typed into only when the mode its footer shows passes them (gates.ts checkRunningMode).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { SendInput, SendOutput } from "../api/index.js";
import { childEnv } from "../claude/launch.js";
import {
  attachArgs,
  isExiting,
  isRunning,
  listNative,
  resumeInBackground,
  type CliRun,
  type NativeSession,
} from "../claude/native.js";
import { SessionError } from "../core/errors.js";
import type { CallContext } from "../core/context.js";
import { briefText } from "../util/terminal-text.js";
import type { SessionRecord } from "../store/schema.js";
import { checkPermissionMode, checkPrompt, claudeBinary } from "./checks.js";
import { checkRunningMode } from "./gates.js";
import { allRunners, type Deps } from "./deps.js";

export type NativeView = NativeSession & { managed_session_id?: string; attach_command?: string };

function cli(d: Deps, cwd?: string): CliRun {
  const dir = cwd && existsSync(cwd) ? cwd : homedir();
  return { bin: claudeBinary(d.cfg), env: childEnv(process.env, {}), cwd: dir };
}

/** list_sessions {include_native}: the CLI's list, with the managed session a conversation belongs to; or why not. */
export async function nativeSessions(
  d: Deps,
  records: SessionRecord[],
): Promise<{ native_sessions: NativeView[]; native_error?: string }> {
  try {
    const byConversation = new Map(records.map((r) => [r.claude_session_id, r.session_id]));
    const list = await listNative(cli(d));
    return {
      native_sessions: list.map((s) => {
        const managed = s.claude_session_id ? byConversation.get(s.claude_session_id) : undefined;
        return {
          ...s,
          ...(managed ? { managed_session_id: managed } : {}),
          ...(s.id ? { attach_command: `claude attach ${s.id}` } : {}),
        };
      }),
    };
  } catch (e) {
    return {
      native_sessions: [],
      native_error: e instanceof SessionError ? e.message : e instanceof Error ? e.message : String(e),
    };
  }
}

const EXIT_WAIT_STEPS = 25;
const EXIT_WAIT_STEP_MS = 200;

/** send_message {native_session_id}. */
export async function sendNative(
  d: Deps,
  input: SendInput & { native_session_id: string },
  ctx: CallContext,
): Promise<SendOutput> {
  if (input.session_id !== undefined || input.team_name !== undefined || input.teammate_name !== undefined) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "name one session: native_session_id, or session_id / team_name + teammate_name, not both.",
    );
  }
  if (input.bash_mode || input.include_context) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "bash_mode and include_context are for sessions this server runs, not for Claude Code's own background sessions.",
    );
  }
  const text = checkPrompt(d.cfg, input.message, "message");
  const id = input.native_session_id;
  const c = cli(d); // CLAUDE_NOT_FOUND as it is
  let all: NativeSession[];
  try {
    all = await listNative(c);
  } catch (e) {
    throw new SessionError("PROCESS_ERROR", e instanceof Error ? e.message : String(e), {
      suggestion: "Background sessions need Claude Code 2.1.197 or later (claude --bg, claude agents --json).",
    });
  }
  let s = all.find((x) => x.kind === "background" && x.id === id);
  // Just stopped, its process still listed: wait for it to go (else attach would find it closing, and
  // --bg --resume would start a copy). One that stays is treated as running.
  for (let i = 0; s && isExiting(s) && i < EXIT_WAIT_STEPS; i++) {
    if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
    await sleep(EXIT_WAIT_STEP_MS);
    s = (await listNative(c).catch(() => [])).find((x) => x.kind === "background" && x.id === id) ?? s;
  }
  if (!s) {
    throw new SessionError("SESSION_NOT_FOUND", `Claude Code has no background session ${id} (claude agents --json --all).`, {
      suggestion: "list_sessions {include_native: true} shows the ids of Claude Code's own background sessions.",
    });
  }
  const sent_at = new Date().toISOString();
  const note = input.wait_for_response
    ? "native sessions are not waited on: list_sessions {include_native: true} shows when it is idle again"
    : undefined;
  const base = { session_id: id, native_session_id: id, message_sent: true, sent_at, ...(note ? { note } : {}) };
  if (!isRunning(s)) {
    if (!s.claude_session_id)
      throw new SessionError(
        "PROCESS_ERROR",
        `background session ${id} is ${s.state ?? "stopped"} and the CLI printed no conversation id to resume it with.`,
      );
    // The server's default mode, gated as a start without permission_mode would be.
    const mode = d.cfg.defaultPermissionMode;
    checkPermissionMode(d.cfg, mode);
    let got: { id: string | undefined; output: string };
    try {
      got = await resumeInBackground(cli(d, s.cwd), s.claude_session_id, text, mode);
    } catch (e) {
      throw new SessionError("PROCESS_ERROR", e instanceof Error ? e.message : String(e));
    }
    // Given the permission mode, the CLI carries the conversation into a new background session (2.1.197 always did;
    // 2.1.330+ keep the id only when no option is given): the caller gets that one's id.
    if (got.id && got.id !== id) {
      return {
        ...base,
        session_id: got.id,
        native_session_id: got.id,
        delivered_via: "resume",
        final_state: "working",
        note: `Claude Code continued ${id}'s conversation as a new background session ${got.id}: ${briefText(got.output, 300)}`,
      };
    }
    return { ...base, delivered_via: "resume", final_state: "working" };
  }
  if (s.status === "busy") {
    throw new SessionError("SESSION_BUSY", `background session ${id} is running a turn.`, {
      suggestion:
        "Try again once list_sessions {include_native: true} shows it idle (a prompt typed now would wait in its input box).",
    });
  }
  if (s.status === "waiting" || s.state === "blocked") {
    throw new SessionError(
      "SESSION_BUSY",
      `background session ${id} is waiting for an answer${s.waiting_for ? ` (${s.waiting_for})` : ""}; a prompt typed now would answer it.`,
      {
        suggestion: `Answer it in a terminal: claude attach ${id}.`,
      },
    );
  }
  await typeThroughAttach(d, s, text, ctx);
  return { ...base, delivered_via: "attach", final_state: "working" };
}

/**
 * Runs `claude attach <id>` in a private terminal (pty, else tmux), waits for the session's empty input box with no
 * turn and no dialog on screen, pastes the prompt, presses Enter, confirms the box emptied, and closes the terminal.
 */
async function typeThroughAttach(d: Deps, s: NativeSession, text: string, ctx: CallContext): Promise<void> {
  // A terminal that ends with this server (pty) first: the throw-away terminal must not outlive it.
  const terminals = allRunners(d).filter((r) => r.typeInto);
  const r = terminals.find((x) => !x.caps.survivesRestart) ?? terminals[0];
  if (!r?.typeInto)
    throw new SessionError(
      "PROCESS_ERROR",
      "typing into a running background session needs a terminal backend (pty or tmux); neither is available.",
      { suggestion: `Attach yourself: claude attach ${s.id}.` },
    );
  const c = cli(d, s.cwd);
  const tid = `native-${s.id}-${randomBytes(4).toString("hex")}`;
  // A session-like directory (the tmux launcher's hand-off files go here; start-up removes leftovers), removed after.
  const spec = {
    id: tid,
    dir: join(d.cfg.stateDir, tid),
    argv: [c.bin, ...attachArgs(s.id!)],
    cwd: c.cwd!,
    env: c.env,
    name: `background session ${s.id}`,
    hint: `claude attach ${s.id}`,
  };
  await r.typeInto({ ...spec, gate: (mode) => checkRunningMode(d.cfg, mode, `background session ${s.id}`) }, text, ctx);
}

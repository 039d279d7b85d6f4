/**
 * Typing a prompt: a bracketed paste in pieces Claude Code takes whole, a separate Enter, and UserPromptSubmit as
 * the proof that it became a turn. The text has been validated (prompt.ts): nothing in it acts as a key.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { stripVTControlCharacters } from "node:util";
import type { Backend } from "../../backends/backend.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { Logger } from "../../util/log.js";
import type { Delivery, DriverSession } from "../driver.js";
import { pollScreen } from "./poll.js";
import { pastePieces } from "./prompt.js";
import { inputText, lastLines, POLL_MS, PROMPT_ATTEMPTS, PROMPT_CONFIRM_MS } from "./screens.js";

/** Pastes the text (bracketed, in pieces) without Enter, and gives a long paste a moment to land. */
export async function pasteText(b: Backend, id: string, text: string): Promise<void> {
  for (const piece of pastePieces(text)) await b.paste(id, piece);
  // The paste and the Enter must be separate keystrokes; a long paste needs a moment to land.
  await sleep(Math.min(500, 40 + Math.floor(text.length / 1000) * 5));
}

/** Pastes a prompt and confirms Claude accepted it (UserPromptSubmit), pressing Enter again a bounded number of times. */
export async function deliver(b: Backend, s: DriverSession, text: string, ctx: CallContext, log: Logger): Promise<Delivery> {
  const before = s.live.fold.prompts_submitted;
  const sent_at = new Date().toISOString();
  await pasteText(b, s.id, text);
  for (let attempts = 1; attempts <= PROMPT_ATTEMPTS; attempts++) {
    await b.keys(s.id, ["Enter"]);
    const f = await s.live.waitFor((x) => x.prompts_submitted > before || x.status === "dead", {
      timeoutMs: PROMPT_CONFIRM_MS * attempts,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    // Accepted first (the process may have died right after, in the same batch of events): it became a turn.
    if (f && f.prompts_submitted > before) return { sent_at, attempts };
    if (f?.status === "dead") throw new SessionError("SESSION_DEAD", `session ${s.id} ended while the prompt was being delivered.`);
    // A message that starts with "/" is a command to Claude Code; one it does not know never becomes a prompt.
    const unknown = text.startsWith("/") ? /^.*Unknown (?:command|skill): \/.*$/m.exec(await b.screen(s.id).catch(() => "")) : null;
    if (unknown) {
      throw new SessionError("INVALID_ARGUMENT", `Claude Code took the message as a slash command and did not send it: ${unknown[0].replace(/^[\s●]+/, "")}`, {
        suggestion: 'Claude Code reads a message that starts with "/" as a command. Put other text before the slash.',
      });
    }
    log.warn(`${s.id}: no UserPromptSubmit after Enter #${attempts}; trying again`);
  }
  const screen = await b.screen(s.id).catch(() => "");
  throw new SessionError("TIMEOUT", `Claude Code did not accept the prompt after ${PROMPT_ATTEMPTS} Enter presses. The terminal shows:\n${lastLines(stripVTControlCharacters(screen))}`);
}

/** Types a prompt into a busy session; Claude queues it and its UserPromptSubmit comes when it runs. */
export async function enqueue(b: Backend, s: DriverSession, text: string): Promise<string> {
  const sent_at = new Date().toISOString();
  await pasteText(b, s.id, text);
  await b.keys(s.id, ["Enter"]);
  return sent_at;
}

/**
 * Bash mode ("!" + command, only when the operator allows it) fires no hook: the command counts as taken once
 * the input box no longer holds it. Its output is in the transcript.
 */
export async function runShell(b: Backend, s: DriverSession, text: string, ctx: CallContext): Promise<string> {
  const sent_at = new Date().toISOString();
  const head = text.slice(1, 40).trim();
  await pasteText(b, s.id, text);
  for (let attempt = 1; attempt <= PROMPT_ATTEMPTS; attempt++) {
    await b.keys(s.id, ["Enter"]);
    const { value } = await pollScreen(
      () => b.screen(s.id),
      (screen) => {
        const box = inputText(screen);
        return box !== undefined && !box.includes(head);
      },
      { everyMs: POLL_MS, timeoutMs: 1000 * attempt, ...(ctx.signal ? { signal: ctx.signal } : {}) },
    );
    if (value) return sent_at;
  }
  throw new SessionError("TIMEOUT", `Claude Code did not take the shell command after ${PROMPT_ATTEMPTS} Enter presses.`);
}

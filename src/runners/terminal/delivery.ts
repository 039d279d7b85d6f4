/**
 * Typing a prompt: a bracketed paste in pieces Claude Code takes whole, a separate Enter, and UserPromptSubmit as
 * the proof that it became a turn. The text has been validated (prompt.ts): nothing in it acts as a key.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { TerminalHost } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { Logger } from "../../util/log.js";
import type { Delivery, DriverSession } from "../driver.js";
import { pollScreen } from "./screen/poll.js";
import { boxSignature, endIsUnique, evenChars, showsDrawn, showsEnd, showsExactly } from "./screen/drawn.js";
import { deliveryMismatch } from "./screen/exact.js";
import { pastePieces } from "./screen/prompt.js";
import {
  DRIVER_TIMING,
  inputText,
  PASTE_DRAWN_MS,
  PASTE_POLL_FAST_FOR_MS,
  PASTE_POLL_FAST_MS,
  PASTE_POLL_MS,
  POLL_MS,
  PROMPT_ATTEMPTS,
  PROMPT_CONFIRM_MS,
  type DriverTiming,
} from "./screen/screens.js";
import { briefText } from "../../util/terminal-text.js";

/** The text as bracketed pastes Claude Code takes whole (prompt.ts), one after the other (in one write where the host can); no Enter. */
async function pasteInPieces(b: TerminalHost, id: string, text: string): Promise<void> {
  const pieces = pastePieces(text);
  if (b.pasteEach && pieces.length > 1) return b.pasteEach(id, pieces);
  for (const piece of pieces) await b.paste(id, piece);
}

/** Pastes the text (bracketed, in pieces) without Enter, and gives a long paste a moment to land. */
export async function pasteText(b: TerminalHost, id: string, text: string, timing: DriverTiming = DRIVER_TIMING): Promise<void> {
  await pasteInPieces(b, id, text);
  // The paste and the Enter must be separate keystrokes; a long paste needs a moment to land.
  await sleep(Math.min(500, timing.pasteLandMs + Math.floor(text.length / 1000) * 5));
}

/** Lines of scrollback read at most while a paste is drawn. */
const SCROLLBACK_MAX = 6000;
/** A box that cannot be read whole (taller than the screen) counts as drawn once the screen held still this long. */
const PASTE_QUIET_MS = 300;

/**
 * Whether the screen alone can prove the whole text drawn once it is pasted in one go (drawn.ts): its last piece has
 * an even character (the proof is that piece's drawing), and either it is a single piece (Claude Code takes a paste
 * whole: any of it drawn is all of it) or its end occurs nowhere else in it.
 */
export function provableWhole(text: string): boolean {
  const pieces = pastePieces(text);
  return evenChars(pieces.at(-1) ?? "") !== "" && (pieces.length === 1 || endIsUnique(text));
}

/**
 * Pastes the text (bracketed, in pieces) without Enter, and waits until the input box shows that Claude Code has
 * taken all of it, so that the Enter that follows is not lost. The screen is read with enough scrollback for the
 * whole box (2.1.197 draws a prompt taller than the screen in full), one read every PASTE_POLL_FAST_MS at first,
 * then every PASTE_POLL_MS.
 *
 * Most text is pasted whole and counts as drawn as soon as the box shows it all (its even characters counted) or its
 * unique end (provableWhole). Repeated text in a box too tall to read whole cannot be told from a box still missing
 * pieces; for it, all but the last character go first, and once the box shows them (read whole, or — 2.1.330's
 * capped box, 2.1.197's box taller than the screen — a screen that shows their end and has held still
 * PASTE_QUIET_MS), the last character is pasted alone: it always changes the box (the last line grows or a line is
 * added), even when every line of the text is the same, and that change is what Enter waits for.
 *
 * The wait is bounded by PASTE_DRAWN_MS; past it Enter is pressed anyway (UserPromptSubmit is compared with the text
 * in any case).
 */
async function pasteDrawn(
  b: TerminalHost,
  s: DriverSession,
  text: string,
  log: Logger,
  signal: { signal?: AbortSignal },
): Promise<void> {
  const end = Date.now() + PASTE_DRAWN_MS;
  const above = Math.min(SCROLLBACK_MAX, Math.ceil(text.length / 20) + text.split("\n").length + 10);
  const read = () => b.screen(s.id, { above });
  const opts = () => ({
    everyMs: PASTE_POLL_MS,
    fast: { everyMs: PASTE_POLL_FAST_MS, forMs: PASTE_POLL_FAST_FOR_MS },
    timeoutMs: Math.max(0, end - Date.now()),
    ...signal,
  });
  if (provableWhole(text)) {
    await pasteInPieces(b, s.id, text);
    const drawn = await pollScreen(read, (sc) => showsExactly(sc, text) || showsEnd(sc, text), opts());
    if (!drawn.value)
      log.debug(`${s.id}: the paste did not show in the input box within ${PASTE_DRAWN_MS} ms; pressing Enter anyway`);
    return;
  }
  const last = [...text].at(-1) ?? "";
  const head = text.slice(0, text.length - last.length);
  let before = head ? "" : await read().catch(() => "");
  if (head) {
    await pasteInPieces(b, s.id, head);
    // Read whole, the box proves the head is in when the head's own last piece has something to count.
    const exact = evenChars(pastePieces(head).at(-1) ?? "") !== "";
    let still = { screen: "", since: Date.now() };
    const settled = await pollScreen(
      read,
      (sc) => {
        if (sc !== still.screen) still = { screen: sc, since: Date.now() };
        if (exact && showsExactly(sc, head)) return true;
        // Not readable whole: the screen shows the end of the text and has stopped changing.
        return Date.now() - still.since >= PASTE_QUIET_MS && showsDrawn(sc, head, "", "");
      },
      opts(),
    );
    if (!settled.value) log.debug(`${s.id}: the paste did not show in the input box within ${PASTE_DRAWN_MS} ms`);
    before = settled.screen;
  }
  await b.paste(s.id, last);
  const sig = boxSignature(before);
  const drawn = await pollScreen(
    read,
    (sc) => (evenChars(last) !== "" && showsExactly(sc, text)) || showsDrawn(sc, text, last, sig),
    opts(),
  );
  if (!drawn.value)
    log.debug(`${s.id}: the end of the paste did not show in the input box within ${PASTE_DRAWN_MS} ms; pressing Enter anyway`);
}

/**
 * The text's last characters, whitespace removed (the box wraps lines and shows a tab as spaces), as the input
 * box shows them once the paste is drawn.
 */
function tailOf(text: string): string {
  return text.replace(/\s+/g, "").slice(-24);
}

/**
 * The input box on `screen` holds the end of `text`: the paste is drawn (and not yet submitted). A prompt taller than
 * the screen has its box's top rule scrolled away; then the end of the text on screen is what counts.
 */
export function showsPasted(screen: string, text: string): boolean {
  const tail = tailOf(text);
  if (!tail) return false;
  const box = inputText(screen);
  if (box !== undefined) return box.replace(/\s+/g, "").endsWith(tail);
  return screen.replace(/\s+/g, "").includes(tail);
}

/**
 * Pastes a prompt and confirms Claude accepted it (UserPromptSubmit). Enter is pressed only once the paste is
 * drawn in the input box (an Enter that arrives while Claude Code is still taking in a paste is lost). If no
 * UserPromptSubmit comes quickly and the box still holds the text, Enter is pressed again (bounded); an empty box
 * means the prompt was taken and its hook is on the way, so the wait simply goes on.
 */
export async function deliver(
  b: TerminalHost,
  s: DriverSession,
  text: string,
  ctx: CallContext,
  log: Logger,
  timing: DriverTiming = DRIVER_TIMING,
): Promise<Delivery> {
  const before = s.live.fold.prompts_submitted;
  const sent_at = new Date().toISOString();
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  const read = () => b.screen(s.id);
  // Claude Code trims trailing whitespace: it is not typed (a blank drawn at the end shows nothing to wait for), unless
  // it follows a backslash, which Enter would otherwise take as "new line".
  const typed = /\\$/.test(text.trimEnd()) ? text : text.trimEnd();
  await pasteDrawn(b, s, typed, log, signal);
  const accepted = (x: { prompts_submitted: number }) => x.prompts_submitted > before;
  const end = Date.now() + PROMPT_CONFIRM_MS;
  const confirm = (ms: number) =>
    s.live.waitFor((x) => accepted(x) || x.status === "dead", {
      timeoutMs: Math.max(0, Math.min(ms, end - Date.now())),
      ...signal,
    });
  let attempts = 1;
  await b.keys(s.id, ["Enter"]);
  let f = await confirm(timing.promptRetryAfterMs);
  while (!f && Date.now() < end) {
    const screen = await read().catch(() => "");
    // No hook yet. An empty box means the prompt was taken and its hook is on the way: keep waiting. The text
    // still in the box means the Enter was lost: press it again (bounded), as a safety net — never while a dialog
    // is open (an Enter there would answer it).
    if (attempts < PROMPT_ATTEMPTS && showsPasted(screen, text) && !DIALOG_OPEN.test(screen)) {
      attempts += 1;
      log.warn(`${s.id}: Enter #${attempts - 1} was not taken (the text is still in the input box); pressing it again`);
      await b.keys(s.id, ["Enter"]);
    }
    f = await confirm(timing.promptRetryAfterMs);
  }
  if (f && !accepted(f) && f.status === "dead") f = (await promptLineAfterDeath(s, before, signal)) ?? f;
  // Accepted first (the process may have died right after, in the same batch of events): it became a turn — with
  // the text that was sent, or the call is an error naming the difference (never a success for another prompt).
  if (f && accepted(f)) {
    if (f.last_prompt === undefined)
      log.warn(`${s.id}: UserPromptSubmit carried no prompt; the delivered text could not be compared`);
    else {
      const mismatch = deliveryMismatch(s.id, text, f.last_prompt);
      if (mismatch) {
        log.warn(mismatch.message);
        throw mismatch;
      }
    }
    return { sent_at, attempts };
  }
  if (f?.status === "dead") throw new SessionError("SESSION_DEAD", `session ${s.id} ended while the prompt was being delivered.`);
  const shown = await read().catch(() => "");
  throw new SessionError(
    "TIMEOUT",
    `Claude Code did not accept the prompt after ${attempts} Enter presses. The terminal shows:\n${briefText(shown)}`,
  );
}

/**
 * How long a session that died while its prompt was being taken is given for the prompt's own line: UserPromptSubmit's
 * hook runs in the background (claude/hooks.ts), so a CLI that died right after taking the prompt can have its exit
 * in the log first.
 */
export const LATE_PROMPT_MS = 1000;

/** The fold once the prompt's line is in after all (LATE_PROMPT_MS at most), or undefined. */
export function promptLineAfterDeath(s: DriverSession, before: number, signal: { signal?: AbortSignal }) {
  return s.live.waitFor((x) => x.prompts_submitted > before, { timeoutMs: LATE_PROMPT_MS, ...signal });
}

/** A permission dialog (or any menu asking to proceed) is on screen. */
const DIALOG_OPEN = /Do you want to proceed\?/;

/**
 * Bash mode ("!" + command, only when the operator allows it) fires no hook: the command counts as taken once
 * the input box no longer holds it. Its output is in the transcript.
 */
export async function runShell(
  b: TerminalHost,
  s: DriverSession,
  text: string,
  ctx: CallContext,
  timing: DriverTiming = DRIVER_TIMING,
): Promise<string> {
  const sent_at = new Date().toISOString();
  const head = text.slice(1, 40).trim();
  await pasteText(b, s.id, text, timing);
  for (let attempt = 1; attempt <= PROMPT_ATTEMPTS; attempt++) {
    await b.keys(s.id, ["Enter"]);
    const { value } = await pollScreen(
      () => b.screen(s.id),
      (screen) => {
        // Taken: the box no longer holds it — or a dialog is open (the turn after the command asks; an Enter would answer it).
        if (DIALOG_OPEN.test(screen)) return true;
        const box = inputText(screen);
        return box !== undefined && !box.includes(head);
      },
      { everyMs: POLL_MS, timeoutMs: 1000 * attempt, ...(ctx.signal ? { signal: ctx.signal } : {}) },
    );
    if (value) return sent_at;
  }
  throw new SessionError("TIMEOUT", `Claude Code did not take the shell command after ${PROMPT_ATTEMPTS} Enter presses.`);
}

/**
 * A quiet turn's screen, read by the session layer's screen watch: a turn a person stopped with Esc (no hook fires),
 * a screen that waits for an answer (cs:blocked), and that screen going away (cs:unblocked). answer_prompt picks one
 * of the screen's choices, read again from the screen at that moment, and presses the server-made keys of that row.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { TerminalHost, Key } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { DriverSession, ProbeOptions, PromptAnswer } from "../driver.js";
import type { LiveSession } from "../../events/live.js";
import { classifyScreen, pickChoice, PROMPT_ANSWER_MS, type ScreenPrompt, unknownScreen } from "./screen/blocking.js";
import { probeInterrupted } from "./interrupt.js";
import { pollScreen } from "./screen/poll.js";
import {
  DIALOG_SETTLE_MS,
  inputText,
  showsBusy,
  showsInterrupted,
  showsInterruptedTurn,
  showsStoppedTurn,
} from "./screen/screens.js";

/** A turn quiet this long is looked at for an Esc typed in an attached pane (as before issue 20). */
const INTERRUPT_QUIET_MS = 5000;

/**
 * The screen's prompt now: a known one (those that may still get a hook only once the turn was quiet long enough),
 * else, once `unknownAfterMs` has passed, a screen that is neither work nor the input box.
 */
function promptOn(screen: string, quietMs: number, unknownAfterMs: number): ScreenPrompt | undefined {
  return (
    classifyScreen(screen, { quietMs }) ??
    (quietMs >= unknownAfterMs ? unknownScreen(screen, inputText(screen) !== undefined) : undefined)
  );
}

/**
 * The frames of the screen answer_prompt last answered. The CLI can fire the answer's hook (PostToolUse) before
 * the dialog is drawn away (on a loaded machine for a second or more): that frame seen again is the answered screen
 * not yet redrawn, not a new one. Forgotten once the screen shows anything else.
 */
const answeredFrames = new WeakMap<LiveSession, Set<string>>();

/** The turn visibly goes on (work, or the input box): a screen that blocked it is gone. */
const goesOn = (screen: string) => showsBusy(screen) || inputText(screen) !== undefined;

const plain = (p: ScreenPrompt) => ({ kind: p.kind, text: p.text, choices: p.choices.map((c) => c.label) });

export async function probeScreen(b: TerminalHost, s: DriverSession, o: ProbeOptions): Promise<void> {
  const f = s.live.fold;
  if (f.status === "busy") {
    const screen = await b.screen(s.id).catch(() => "");
    if (!screen || s.live.fold.status !== "busy") return;
    // Not sooner: right after UserPromptSubmit the last turn's "Interrupted" can still be the last line on screen.
    if (o.quietMs >= INTERRUPT_QUIET_MS) {
      await probeInterrupted(b, s);
      if (s.live.fold.status !== "busy") return;
    }
    if (answeredFrames.get(s.live)?.has(screen)) return;
    answeredFrames.delete(s.live);
    const p = promptOn(screen, o.quietMs, o.unknownAfterMs);
    if (p) await s.emit({ hook_event_name: "cs:blocked", blocked: plain(p) });
    return;
  }
  if (f.status !== "blocked" || !f.blocked) return;
  const screen = await b.screen(s.id).catch(() => "");
  if (!screen || s.live.fold.status !== "blocked") return;
  const p = promptOn(screen, Infinity, 0);
  if (p && !(p.kind === "unknown" && f.blocked.kind !== "unknown")) {
    // Another screen took its place (or the unknown one turned out to be a known one).
    if (p.kind !== f.blocked.kind || p.choices.map((c) => c.label).join("\n") !== f.blocked.choices.join("\n")) {
      await s.emit({ hook_event_name: "cs:blocked", blocked: plain(p) });
    }
    return;
  }
  // A frame between two screens says nothing: only work or the input box ends the block.
  if (goesOn(screen)) await settle(s, screen);
}

/** The screen went with no hook: a stopped turn ("Interrupted", or the prompt put back), or the turn goes on. */
async function settle(s: DriverSession, screen: string): Promise<void> {
  if (s.live.fold.status !== "blocked") return;
  const stopped =
    showsInterrupted(screen) || showsInterruptedTurn(screen) || (Boolean(inputText(screen)) && showsStoppedTurn(screen));
  await s.emit({ hook_event_name: stopped ? "cs:interrupted" : "cs:unblocked" });
}

export async function answerPrompt(
  b: TerminalHost,
  s: DriverSession,
  choice: string | number,
  ctx: CallContext,
): Promise<PromptAnswer> {
  const blocked = s.live.fold.blocked;
  const screen = await b.screen(s.id);
  const p = promptOn(screen, Infinity, 0);
  if (!blocked || !p) {
    if (!p && blocked && goesOn(screen)) await settle(s, screen);
    throw new SessionError("SESSION_NOT_READY", `session ${s.id} shows no prompt to answer now (it is ${s.live.fold.status}).`, {
      suggestion: "Call wait_for_completion or list_sessions: a session that waits for an answer is `blocked`, with its choices.",
    });
  }
  if (p.kind !== blocked.kind) {
    await s.emit({ hook_event_name: "cs:blocked", blocked: plain(p) });
    throw new SessionError(
      "SESSION_NOT_READY",
      `session ${s.id} now shows another screen (${p.kind}), with the choices: ${p.choices.map((c, i) => `${i + 1}. ${c.label}`).join("; ") || "none"}.`,
      {
        suggestion: "Answer the screen it shows now (wait_for_completion reports it).",
        details: { kind: p.kind, choices: p.choices.map((c) => c.label) },
      },
    );
  }
  const row = pickChoice(p.choices, choice);
  if (!row) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `"${String(choice).slice(0, 80)}" is not one of the choices of this ${p.kind} screen: ` +
        `${p.choices.map((c, i) => `${i + 1}. ${c.label}`).join("; ") || "(none: this screen offers no choice the server can press)"}.`,
      {
        suggestion: p.choices.length
          ? "Pass one of the listed labels or its number."
          : "Interrupt the turn (interrupt_session) or attach to the session and answer it there.",
        details: { kind: p.kind, choices: p.choices.map((c) => c.label) },
      },
    );
  }
  const frames = new Set([screen]);
  await pressRow(b, s.id, row.keys);
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  // Settled: another known screen, or the turn visibly going on. A frame in between is waited out, and so is the
  // same screen with its cursor moved (the text changes, the choices do not).
  const labels = (x: ScreenPrompt) => x.choices.map((c) => c.label).join("\n");
  const same = (x: ScreenPrompt | undefined) => x !== undefined && x.kind === p.kind && labels(x) === labels(p);
  const settled = (sc: string) => {
    const now = classifyScreen(sc);
    if (same(now)) frames.add(sc);
    return now ? !same(now) : goesOn(sc);
  };
  const gone = await pollScreen(() => b.screen(s.id), settled, {
    everyMs: 100,
    timeoutMs: PROMPT_ANSWER_MS,
    stop: () => s.live.fold.status !== "blocked",
    ...signal,
  });
  if (s.live.fold.status === "blocked") {
    if (!gone.value) {
      if (same(promptOn(gone.screen, Infinity, 0))) {
        throw new SessionError("TIMEOUT", `the ${p.kind} screen of ${s.id} did not take the answer "${row.label}".`, {
          suggestion: "Look at stream_output (mode screen) and answer again.",
        });
      }
      // Something else shows: the screen watch reports it (a screen the server does not know waits its time).
      answeredFrames.set(s.live, frames);
      return { kind: p.kind, label: row.label };
    }
    // A known screen next is reported at once (a permission dialog too: if its hook fires, the hook's event wins).
    const next = classifyScreen(gone.screen);
    if (next) await s.emit({ hook_event_name: "cs:blocked", blocked: plain(next) });
    else await settle(s, gone.screen);
  }
  answeredFrames.set(s.live, frames);
  return { kind: p.kind, label: row.label };
}

/** A menu's moves, a moment for the cursor to be drawn, then Enter; a key prompt's one key. */
async function pressRow(b: TerminalHost, id: string, keys: readonly Key[]): Promise<void> {
  const moves = keys.slice(0, -1);
  if (moves.length) {
    await b.keys(id, moves);
    await sleep(DIALOG_SETTLE_MS);
  }
  await b.keys(id, keys.slice(-1));
}

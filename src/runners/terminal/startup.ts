/**
 * From spawn to the first prompt: wait for SessionStart, answer the trust screen when asked to, recognise the
 * other first-run screens (they fire no hook), wait for the input box, and say why a start failed.
 */
import { stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { TerminalHost } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import { readTail } from "../../util/fs/files.js";
import type { Logger } from "../../util/log.js";
import type { Delivery, DriverSession, ReadyOptions } from "../driver.js";
import { promptLineAfterDeath } from "./delivery.js";
import { deliveryMismatch } from "./screen/exact.js";
import { pollScreen } from "./screen/poll.js";
import { briefText } from "../../util/terminal-text.js";
import {
  BLOCKING_HELP,
  detectBlockingScreen,
  DIALOG_SETTLE_MS,
  FIRST_RUN_PROBE_AFTER_MS,
  INPUT_DRAWN_MS,
  DRIVER_TIMING,
  type DriverTiming,
  inputText,
  menuMoves,
  POLL_MS,
  PROMPT_CONFIRM_MS,
  RAW_LOG_SETTLE_MS,
  STARTUP_TICK_MS,
  TRUST_ANSWER_EVERY_MS,
  type BlockingScreen,
} from "./screen/screens.js";

export async function awaitReady(
  b: TerminalHost,
  s: DriverSession,
  opts: ReadyOptions,
  ctx: CallContext,
  log: Logger,
  timing: DriverTiming = DRIVER_TIMING,
): Promise<void> {
  let trustedAt = 0;
  let blocked: BlockingScreen | undefined;
  let drawn: string | undefined;
  let sawTrust = false;
  // Hooks decide; the screen is read only while SessionStart is late, to recognise a first-run screen.
  const folded = await s.live.waitFor((f) => f.status !== "starting" || blocked !== undefined, {
    timeoutMs: opts.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    tickMs: STARTUP_TICK_MS,
    tick: async (ms) => {
      if (ms % 2000 < STARTUP_TICK_MS)
        ctx.progress?.({ progress: ms, total: opts.timeoutMs, message: "waiting for Claude Code to start" });
      if (ms < FIRST_RUN_PROBE_AFTER_MS) return;
      // Reading the screen forks a tmux client (issue 38: four starts at once on a loaded machine spent ~60 ms of the
      // server's CPU a round on it). Nothing drawn since the last read (the raw output's size and time unchanged):
      // the same screen, which showed nothing to act on. A trust screen answered is read again (it may stay).
      const now = await drawnKey(s.rawLogPath);
      if (now !== undefined && now === drawn && !sawTrust) return;
      drawn = now;
      const screen = await b.screen(s.id).catch(() => "");
      const seen = detectBlockingScreen(screen);
      sawTrust = seen === "trust";
      if (seen === "trust" && opts.trustWorkspace) {
        if (Date.now() - trustedAt > TRUST_ANSWER_EVERY_MS) {
          trustedAt = Date.now();
          await sleep(DIALOG_SETTLE_MS);
          // 2.1.330 lists "No, exit" first (2.1.197: "1. Yes, I trust this folder"): move onto Yes, then Enter.
          const moves = menuMoves(screen, /Yes, I trust this folder/i) ?? 0;
          for (let i = 0; i < Math.abs(moves); i++) await b.keys(s.id, [moves > 0 ? "Down" : "Up"]);
          if (moves) await sleep(100);
          await b.keys(s.id, ["Enter"]);
        }
        return;
      }
      blocked = seen;
    },
  });
  if (folded && isLive(folded.status) && folded.status !== "starting") {
    // A prompt on the command line is submitted by the CLI itself: nothing will be pasted into the box.
    if (!opts.promptCarried) await inputDrawn(b, s.id, log, timing.inputHandlerMs);
    return;
  }
  throw await diagnose(b, s, opts, blocked);
}

/** What the terminal has printed so far, as the raw log's size and time (undefined when it cannot be read). */
async function drawnKey(path: string): Promise<string | undefined> {
  try {
    const st = await stat(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/**
 * SessionStart can come before the input box is drawn (2.1.330: ~200 ms before), and a bracketed paste that
 * arrives then loses its brackets (each newline submits). Waits, bounded, until the box shows.
 */
async function inputDrawn(b: TerminalHost, id: string, log: Logger, handlerMs: number): Promise<void> {
  const { value } = await pollScreen(
    () => b.screen(id),
    (screen) => inputText(screen) !== undefined,
    { everyMs: POLL_MS, timeoutMs: INPUT_DRAWN_MS },
  );
  if (!value) log.warn(`${id}: no input box on screen ${INPUT_DRAWN_MS} ms after SessionStart; going on`);
  else await sleep(handlerMs);
}

/**
 * The first prompt, given on the command line (runner.ts): the CLI submits it once it is up. Resolves once it became
 * a turn with the text that was sent (exact.ts: a difference is a PROCESS_ERROR naming it, never a success).
 */
export async function carriedPrompt(s: DriverSession, text: string, startTimeoutMs: number, ctx: CallContext): Promise<Delivery> {
  const sent_at = new Date().toISOString();
  const before = s.live.fold.prompts_submitted;
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  let f = await s.live.waitFor((x) => x.prompts_submitted > before || !isLive(x.status), {
    timeoutMs: startTimeoutMs + PROMPT_CONFIRM_MS,
    ...signal,
  });
  if (f && f.prompts_submitted <= before && f.status === "dead") f = (await promptLineAfterDeath(s, before, signal)) ?? f;
  if (!f)
    throw new SessionError(
      "TIMEOUT",
      `session ${s.id}: the prompt given at start did not become a turn within ${startTimeoutMs + PROMPT_CONFIRM_MS} ms.`,
    );
  if (f.prompts_submitted <= before)
    throw new SessionError("SESSION_DEAD", `session ${s.id} ended before taking the prompt given at start.`, {
      suggestion: "Use resume_session to start it again.",
    });
  if (f.last_prompt !== undefined) {
    const mismatch = deliveryMismatch(s.id, text, f.last_prompt);
    if (mismatch) throw mismatch;
  }
  return { sent_at, attempts: 0 };
}

/** Why a start did not reach ready, with a short excerpt of what the process printed or the screen shows. */
async function diagnose(
  b: TerminalHost,
  s: DriverSession,
  opts: ReadyOptions,
  blocked: BlockingScreen | undefined,
): Promise<SessionError> {
  const f = s.live.fold;
  if (f.status === "dead") {
    // What the process printed before it died is in the raw log (tmux may already show "Pane is dead").
    // The raw log is written through a pipe (tmux's pipe-pane): the last words can land a moment after the exit.
    let printed = "";
    for (const end = Date.now() + RAW_LOG_SETTLE_MS; ; await sleep(POLL_MS)) {
      printed = briefText((await readTail(s.rawLogPath, 16 * 1024)).text);
      if ((printed && (!opts.underDoppler || /doppler/i.test(printed))) || Date.now() > end) break;
    }
    if (opts.underDoppler && /doppler/i.test(printed))
      return new SessionError("DOPPLER_ERROR", `doppler failed (exit ${f.exit_code ?? "?"}):\n${printed}`);
    return new SessionError(
      "PROCESS_ERROR",
      `Claude Code exited during start-up (exit ${f.exit_code ?? "?"}). It printed:\n${printed || "(nothing)"}`,
    );
  }
  const screen = await b.screen(s.id).catch(() => "");
  const shown = briefText(screen);
  const seen = blocked ?? detectBlockingScreen(screen);
  if (seen) {
    return new SessionError(
      "STARTUP_BLOCKED",
      `Claude Code is waiting at its ${seen.replace("_", " ")} screen instead of its prompt:\n${shown}`,
      {
        suggestion: BLOCKING_HELP[seen],
        details: { screen: seen },
      },
    );
  }
  return new SessionError(
    "TIMEOUT",
    `Claude Code did not report SessionStart within ${opts.timeoutMs} ms. The terminal shows:\n${shown || "(nothing)"}`,
  );
}

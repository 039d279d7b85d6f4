/**
 * Esc stops a turn and fires no hook, so the screen has to confirm it: "Interrupted", or (Esc before any reply,
 * 2.1.197 and 2.1.330) no busy indicator and the prompt put back into the input box, which is then cleared
 * (C-c clears a non-empty input) so the next paste stands alone.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { TerminalHost } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { inTurn } from "../../core/status.js";
import type { DriverSession } from "../driver.js";
import { pollScreen } from "./screen/poll.js";
import {
  BUSY_FRAME_MS,
  ESC_AGAIN_MS,
  inputText,
  showsBusy,
  showsInterrupted,
  showsInterruptedTurn,
  showsStoppedTurn,
  STOPPED_STABLE_MS,
} from "./screen/screens.js";

export async function interruptByEsc(b: TerminalHost, s: DriverSession, timeoutMs: number, ctx: CallContext): Promise<void> {
  const id = s.id;
  const deadline = Date.now() + timeoutMs;
  const stillBusy = () => inTurn(s.live.fold.status);
  // A frame read too early can look idle (the busy frame not drawn yet): wait, bounded, until the turn shows as
  // busy before pressing Esc, and believe a stopped screen only once it has held for a moment.
  await pollScreen(() => b.screen(id), showsBusy, {
    everyMs: 50,
    timeoutMs: BUSY_FRAME_MS,
    stop: () => s.live.fold.status !== "busy",
  });
  let escAt = Date.now();
  let presses = 1;
  await b.keys(id, ["Escape"]);
  let stoppedSince: number | undefined;
  while (Date.now() < deadline && stillBusy()) {
    if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
    const screen = await b.screen(id).catch(() => "");
    if (showsInterrupted(screen)) {
      await s.emit({ hook_event_name: "cs:interrupted" });
      return;
    }
    if (showsStoppedTurn(screen)) {
      stoppedSince ??= Date.now();
      if (Date.now() - stoppedSince >= STOPPED_STABLE_MS) {
        if (inputText(screen)) await b.keys(id, ["C-c"]);
        await s.emit({ hook_event_name: "cs:interrupted" });
        return;
      }
    } else {
      stoppedSince = undefined;
      if (Date.now() - escAt > ESC_AGAIN_MS && presses < 3) {
        presses += 1;
        escAt = Date.now();
        await b.keys(id, ["Escape"]);
      }
    }
    await sleep(50);
  }
}

/** One look at the screen during a quiet wait: a turn a person stopped with Esc in an attached pane. */
export async function probeInterrupted(b: TerminalHost, s: DriverSession): Promise<void> {
  const screen = await b.screen(s.id).catch(() => "");
  if (!screen) return;
  const restored = inputText(screen);
  // The "Interrupted" line far above an empty input box (2.1.330's tall pane) counts too.
  const interrupted = showsInterrupted(screen) || (restored === "" && showsInterruptedTurn(screen));
  if (interrupted || (restored && showsStoppedTurn(screen))) {
    if (restored && !interrupted) await b.keys(s.id, ["C-c"]);
    await s.emit({ hook_event_name: "cs:interrupted" });
  }
}

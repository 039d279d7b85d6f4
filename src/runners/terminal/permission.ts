/**
 * Answering the permission dialog by keys: wait until it is drawn (2.1.330 fires PermissionRequest first),
 * read the digit of the wanted option from its labels (the numbering differs between versions), press it, and
 * confirm the answer took effect (a hook follows an allowed tool; nothing follows a denial but the screen).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { TerminalHost, Key } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { PermissionDecision } from "../../api/index.js";
import type { DriverSession } from "../driver.js";
import { pollScreen } from "./screen/poll.js";
import {
  ANSWER_CONFIRM_MS,
  DENY_STOP_MS,
  DIALOG_DRAWN_MS,
  DIALOG_KEYS_AFTER_MS,
  permissionDigit,
  showsStoppedTurn,
} from "./screen/screens.js";

const DIALOG = /Do you want to proceed\?/;

export async function answerByKeys(
  b: TerminalHost,
  s: DriverSession,
  decision: PermissionDecision,
  ctx: CallContext,
): Promise<void> {
  const seq = s.live.fold.pending_permission?.seq;
  const stillPending = () => s.live.fold.pending_permission?.seq === seq;
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  const read = () => b.screen(s.id);
  // The CLI ignores keys in the first ~0.2 s after the dialog opens: wait until it shows, then a moment more.
  const drawn = await pollScreen(read, (sc) => DIALOG.test(sc), {
    everyMs: 50,
    timeoutMs: DIALOG_DRAWN_MS,
    stop: () => !stillPending(),
    ...signal,
  });
  await sleep(DIALOG_KEYS_AFTER_MS);
  let screen = drawn.screen;
  // The digits differ between versions (2.1.330 inserts "3. Yes, and switch to auto mode" before No): read them.
  // Unread, deny is Esc (the dialog's own cancel; a "3" would switch 2.1.330 to auto mode and run the tool).
  const key = (permissionDigit(screen, decision) ??
    (decision === "allow" ? "1" : decision === "allow_always" ? "2" : "Escape")) as Key;
  for (let attempt = 1; attempt <= 3; attempt++) {
    await b.keys(s.id, [key]);
    let gone = false;
    const f = await s.live.waitFor((x) => x.pending_permission?.seq !== seq || gone, {
      timeoutMs: ANSWER_CONFIRM_MS * attempt,
      tickMs: 100,
      tick: async () => {
        screen = await read().catch(() => screen);
        gone = !DIALOG.test(screen);
      },
      ...signal,
    });
    if (f && !stillPending()) return;
    if (!gone) continue;
    // The dialog went without a hook. Allowed: the tool runs now, and no hook says so before PostToolUse.
    if (decision !== "deny") {
      if (stillPending()) await s.emit({ hook_event_name: "cs:answered", ...(seq !== undefined ? { permission_seq: seq } : {}) });
      return;
    }
    // The real CLI ends the turn on "No" like an Esc ("Interrupted", no Stop hook): confirm it on screen.
    const stopped = await pollScreen(read, showsStoppedTurn, {
      everyMs: 100,
      timeoutMs: DENY_STOP_MS,
      stop: () => !stillPending(),
      ...signal,
    });
    if (stopped.value && stillPending()) await s.emit({ hook_event_name: "cs:interrupted" });
    return;
  }
  throw new SessionError("TIMEOUT", `the permission dialog of ${s.id} did not take the answer.`);
}

/**
 * /clear and /compact, typed by the server (reset_session, compact_session): the only slash commands it ever
 * types, from its own text (compact's instructions were checked as prompt text by the session layer). Confirmed
 * by the SessionStart hook with the command's source.
 */
import type { TerminalHost } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { Folded } from "../../events/reducer.js";
import { commandDone, commandText } from "../command.js";
import type { DriverSession, SessionCommand } from "../driver.js";
import { pasteText, showsPasted } from "./delivery.js";
import { DRIVER_TIMING, type DriverTiming } from "./screen/screens.js";
import { briefText } from "../../util/terminal-text.js";

/** How long after the Enter the command's box may still hold the text before Enter is pressed once more. */
const RETRY_AFTER_MS = 1500;

export async function typeCommand(
  b: TerminalHost,
  s: DriverSession,
  cmd: SessionCommand,
  timeoutMs: number,
  ctx: CallContext,
  timing: DriverTiming = DRIVER_TIMING,
): Promise<void> {
  const text = commandText(cmd);
  const after = s.live.fold.seq;
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  const settled = (x: Folded) => commandDone(x, cmd, after) || x.status === "dead";
  await pasteText(b, s.id, text, timing);
  await b.keys(s.id, ["Enter"]);
  let f = await s.live.waitFor(settled, { timeoutMs: Math.min(RETRY_AFTER_MS, timeoutMs), ...signal });
  if (!f) {
    // An Enter lost while the paste was still being taken in: the text is still in the box.
    if (showsPasted(await b.screen(s.id).catch(() => ""), text)) await b.keys(s.id, ["Enter"]);
    f = await s.live.waitFor(settled, { timeoutMs: Math.max(0, timeoutMs - RETRY_AFTER_MS), ...signal });
  }
  if (f && commandDone(f, cmd, after)) return;
  if (f?.status === "dead") throw new SessionError("SESSION_DEAD", `session ${s.id} ended during ${text.split(" ")[0]}.`);
  const shown = await b.screen(s.id).catch(() => "");
  throw new SessionError(
    "TIMEOUT",
    `Claude Code did not report ${text.split(" ")[0]} done (no SessionStart with source ${cmd.kind}) within ${timeoutMs} ` +
      `ms. The terminal shows:\n${briefText(shown)}`,
  );
}

/**
 * Typing one prompt into another program's Claude Code screen (`claude attach <id>` of a background session): the
 * program runs in a private terminal of this server, the prompt is pasted once the screen shows an empty input box
 * with no turn and no dialog, Enter is pressed, the box must empty; then the terminal is closed (the program ends,
 * what it attached to goes on). The session layer gives what to run and a gate on the screen's permission mode.
 */
import { rm, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { briefText } from "../../util/terminal-text.js";
import type { TerminalHost } from "../host.js";
import type { TypeIntoSpec } from "../runner.js";
import { showsPasted } from "./delivery.js";
import { pollScreen } from "./screen/poll.js";
import { footerPermissionMode, inputText, showsBusy } from "./screen/screens.js";

const ATTACH_READY_MS = 20_000;
const PASTE_DRAWN_MS = 5_000;
const SUBMIT_MS = 10_000;
const POLL_MS = 100;
/** A dialog on the attached screen: typing would answer it. */
const DIALOG = /Do you want to proceed\?|Esc to cancel|Enter to confirm/i;

export async function typeInto(b: TerminalHost, t: TypeIntoSpec, text: string, ctx: CallContext): Promise<void> {
  await mkdir(t.dir, { recursive: true, mode: 0o700 });
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  const read = () => b.screen(t.id);
  let started = false;
  try {
    await b.spawn({
      id: t.id,
      dir: t.dir,
      argv: t.argv,
      cwd: t.cwd,
      env: t.env,
      cols: 200,
      rows: 50,
      rawLogPath: join(t.dir, "output.log"),
      eventsPath: join(t.dir, "events.jsonl"),
    });
    started = true;
    const ready = await pollScreen(read, (sc) => inputText(sc) === "" && !showsBusy(sc) && !DIALOG.test(sc), {
      everyMs: POLL_MS,
      timeoutMs: ATTACH_READY_MS,
      ...signal,
    });
    if (!ready.value) {
      const alive = (await b.list().catch(() => undefined))?.get(t.id)?.alive;
      const what = briefText(ready.screen, 300);
      if (alive === false) throw new SessionError("PROCESS_ERROR", `${t.hint} ended: ${what || "no output"}`);
      throw new SessionError(
        "SESSION_BUSY",
        `${t.name} showed no empty input box within ${ATTACH_READY_MS} ms (nothing was typed): ${what}`,
        {
          suggestion: `Look at it in a terminal: ${t.hint}.`,
        },
      );
    }
    t.gate(footerPermissionMode(ready.screen));
    await b.paste(t.id, text);
    await pollScreen(read, (sc) => showsPasted(sc, text), { everyMs: POLL_MS, timeoutMs: PASTE_DRAWN_MS, ...signal });
    await b.keys(t.id, ["Enter"]);
    const taken = await pollScreen(read, (sc) => inputText(sc) === "" || showsBusy(sc), {
      everyMs: POLL_MS,
      timeoutMs: SUBMIT_MS,
      ...signal,
    });
    if (!taken.value) {
      throw new SessionError(
        "PROCESS_ERROR",
        `the prompt was typed into ${t.name} but its input box did not empty within ${SUBMIT_MS} ms: ${briefText(taken.screen, 300)}`,
        {
          suggestion: `Look at it in a terminal: ${t.hint}.`,
        },
      );
    }
  } finally {
    // Closing the attaching client leaves the session running (claude attach --help).
    if (started) await b.kill(t.id, { graceMs: 0 }).catch(() => undefined);
    await b.remove(t.id).catch(() => {});
    await rm(t.dir, { recursive: true, force: true }).catch(() => {});
  }
}

/** The text of the server's own slash commands and their confirmation in the fold (both drivers). */
import type { Folded } from "../events/reducer.js";
import type { SessionCommand } from "./driver.js";

/** The command line for `cmd`. */
export function commandText(cmd: SessionCommand): string {
  return cmd.kind === "clear" ? "/clear" : cmd.instructions ? `/compact ${cmd.instructions}` : "/compact";
}

/** The fold shows the SessionStart of `cmd` that came after sequence number `after`. */
export function commandDone(f: Folded, cmd: SessionCommand, after: number): boolean {
  return f.session_start !== undefined && f.session_start.seq >= after && f.session_start.source === cmd.kind;
}

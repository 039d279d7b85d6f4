/**
 * The per-session settings file that makes Claude Code report every state change to our log.
 */
import { HOOK_EVENTS } from "../sessions/reducer.js";
import { shQuote } from "../util/shell.js";

export function hooksSettings(hookScript: string, eventsPath: string): object {
  // `exec` saves the shell Claude starts one fork: the hook runs on every event, inside Claude's loop.
  const command = `exec ${shQuote(hookScript)} ${shQuote(eventsPath)}`;
  const hooks: Record<string, unknown> = {};
  for (const ev of HOOK_EVENTS) hooks[ev] = [{ matcher: "*", hooks: [{ type: "command", command }] }];
  return { hooks };
}

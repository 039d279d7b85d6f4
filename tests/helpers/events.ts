/** Reading a session's events log in tests. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The prompts a session's Claude accepted (its UserPromptSubmit hooks), in order, from the session's events log. */
export function promptsOf(stateDir: string, id: string): string[] {
  return readFileSync(join(stateDir, id, "events.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { hook_event_name: string; prompt?: string })
    .filter((e) => e.hook_event_name === "UserPromptSubmit")
    .map((e) => e.prompt ?? "");
}

/** The hook_event_name of every line of a session's events log, in order; none while the log is not there yet. */
export function eventNamesOf(stateDir: string, id: string): string[] {
  try {
    return readFileSync(join(stateDir, id, "events.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { hook_event_name: string }).hook_event_name);
  } catch {
    return [];
  }
}

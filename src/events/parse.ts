/**
 * An events.jsonl line read defensively (the format is Claude's, the file is shared with hook processes): a blank,
 * torn or foreign line is no event, and the fields the fold trusts (a blocking screen, a snapshot) are checked first.
 */
import { BLOCKED_KINDS } from "../core/status.js";
import { HOOK_EVENTS, OWN_EVENTS } from "../core/events.js";
import type { Folded, LogEvent } from "./types.js";

const KNOWN: ReadonlySet<string> = new Set<string>([...HOOK_EVENTS, ...OWN_EVENTS]);

/** Parses one log line; returns undefined for blank, torn or foreign lines (the log is parsed defensively). */
export function parseEventLine(line: string): LogEvent | undefined {
  const t = line.trim();
  if (!t.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    if (typeof v !== "object" || v === null) return undefined;
    const name = (v as { hook_event_name?: unknown }).hook_event_name;
    if (typeof name !== "string" || !KNOWN.has(name)) return undefined;
    return v as LogEvent;
  } catch {
    return undefined;
  }
}

/** A cs:blocked event's screen, with the fields the fold copies. */
export function isBlockedEvent(v: unknown): v is NonNullable<LogEvent["blocked"]> {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.kind === "string" &&
    (BLOCKED_KINDS as readonly string[]).includes(o.kind) &&
    typeof o.text === "string" &&
    Array.isArray(o.choices) &&
    o.choices.every((c) => typeof c === "string")
  );
}

/** A cs:snapshot's fold, as far as the fold relies on it (a malformed one changes nothing). */
export function isFold(v: unknown): v is Folded {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.status === "string" &&
    typeof o.turn_count === "number" &&
    typeof o.prompts_submitted === "number" &&
    typeof o.seq === "number"
  );
}

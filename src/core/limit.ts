/**
 * Usage and rate limits (issue 33): what a turn that ended on a 429 says about the limit, read from the CLI's
 * own message (the StopFailure hook's `last_assistant_message`, measured in docs/limits.md):
 *
 *   plan login  "You've hit your 5-hour limit · resets 7:59pm (UTC)"   (2.1.197: "your session limit")
 *               "You've hit your weekly limit · resets 8pm (UTC)"
 *   API key     "API Error: Request rejected (429) · <the API's message>"   (no reset time anywhere)
 *               "API Error: Server is temporarily limiting requests (not your usage limit) · …"
 *
 * Pure: the reference time is the event's own timestamp, so every server folds the same log to the same limit.
 */

export const LIMIT_KINDS = ["five_hour", "seven_day", "rate", "other"] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

export interface LimitInfo {
  kind: LimitKind;
  /** When the limit lifts (ISO 8601): the message's time read as the END of its minute; else `at` + `rateWaitMs`. */
  resets_at: string;
  /** True when the reset time came from the CLI's message; false when it is the server's guess (an API key's 429). */
  reset_known: boolean;
  /** The CLI's message, as it said it. */
  message: string;
  /** Set when the message's reset time was out of bounds (in the past, or more than 8 days ahead) and was replaced. */
  warning?: string;
}

/** A reset further ahead than this is not believed (the weekly window is the longest: 7 days). */
const MAX_AHEAD_MS = 8 * 24 * 3600_000;

/** Whether a StopFailure (or a failed turn's message) is a usage or rate limit. */
export function isLimitFailure(error: string | undefined, message: string | undefined): boolean {
  if (error === "rate_limit") return true;
  return (
    typeof message === "string" &&
    (/^You've hit your .*limit/.test(message) ||
      /^API Error: .*\(429\)/.test(message) ||
      /^API Error: Server is temporarily limiting requests/.test(message))
  );
}

export function limitKindOf(message: string): LimitKind {
  if (/hit your (5-hour|session) limit/i.test(message)) return "five_hour";
  if (/hit your weekly limit/i.test(message)) return "seven_day";
  if (/^API Error/.test(message)) return "rate";
  return "other";
}

/**
 * Reads "resets 7:59pm (UTC)", "resets 8pm (Europe/Paris)", "resets 8pm" (local time of the server) as the first such
 * wall-clock time after `at`, in that zone, plus 60 s (the message shows minutes only; the limit lifts within that
 * minute, so its end is never early). Undefined when the message has no time or names an unknown zone.
 */
export function resetOf(message: string, at: number): number | undefined {
  const m = /resets\s+(?:(\w{3,9}\s+\d{1,2}),?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)(?:\s*\(([^)]+)\))?/i.exec(message);
  if (!m) return undefined;
  let h = parseInt(m[2]!, 10) % 12;
  if (m[4]!.toLowerCase() === "pm") h += 12;
  const min = m[3] ? parseInt(m[3], 10) : 0;
  if (min > 59) return undefined;
  const zone = m[5]?.trim();
  const offset = zoneOffsetMs(zone, at);
  if (offset === undefined) return undefined;
  // The wall clock of `at` in that zone, then the next time it reads h:min.
  const local = new Date(at + offset);
  let t = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), h, min) - offset;
  if (m[1]) {
    // "resets Dec 3, 8pm": the given day of this or next year.
    const d = new Date(`${m[1]} ${local.getUTCFullYear()} 00:00:00 UTC`);
    if (Number.isNaN(d.getTime())) return undefined;
    t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), h, min) - offset;
    if (t + 60_000 <= at) t = Date.UTC(d.getUTCFullYear() + 1, d.getUTCMonth(), d.getUTCDate(), h, min) - offset;
  } else if (t + 60_000 <= at) t += 24 * 3600_000;
  return t + 60_000;
}

/** The offset (ms to add to UTC) of an IANA zone at `at`; the server's own zone when none is named. */
function zoneOffsetMs(zone: string | undefined, at: number): number | undefined {
  if (!zone) return -new Date(at).getTimezoneOffset() * 60_000;
  if (zone === "UTC" || zone === "GMT") return 0;
  try {
    const parts = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    }).formatToParts(new Date(at));
    const n = (t: string) => parseInt(parts.find((p) => p.type === t)?.value ?? "0", 10);
    const asUtc = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour") % 24, n("minute"), n("second"));
    return asUtc - Math.floor(at / 1000) * 1000;
  } catch {
    return undefined;
  }
}

/** The limit a failed turn's message describes, at `at` (epoch ms); `rateWaitMs` when it names no reset time. */
export function limitOf(message: string, at: number, rateWaitMs: number): LimitInfo {
  const kind = limitKindOf(message);
  let reset = resetOf(message, at);
  let warning: string | undefined;
  if (reset !== undefined && (reset <= at || reset - at > MAX_AHEAD_MS)) {
    const when = reset <= at ? "in the past" : "more than 8 days ahead";
    warning = `the reset time the CLI gave (${new Date(reset).toISOString()}) is ${when}; waiting ${Math.round(rateWaitMs / 1000)} s instead`;
    reset = undefined;
  }
  const known = reset !== undefined;
  return {
    kind,
    resets_at: new Date(known ? reset! : at + rateWaitMs).toISOString(),
    reset_known: known,
    message: message.slice(0, 500),
    ...(warning ? { warning } : {}),
  };
}

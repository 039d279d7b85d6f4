/**
 * Delivery is byte-exact or an error: the prompt Claude Code reports in its UserPromptSubmit hook is compared with
 * the text the server typed. Only the transforms measured on the real CLI (2.1.197 and 2.1.330, tmux and pty) are
 * allowed for: a tab arrives as four spaces and trailing whitespace is trimmed. Invisible characters the CLI drops are
 * refused before anything is typed (prompt.ts). Anything else that differs is a PROCESS_ERROR naming the first difference, never a success.
 */
import { SessionError } from "../../../core/errors.js";

/**
 * What Claude Code reports for a typed text when it arrives intact: a pasted tab becomes four spaces (facts §10), and
 * whitespace at the end is trimmed (spaces, tabs, no-break spaces: JavaScript's trimEnd; leading whitespace stays).
 * Both measured on 2.1.197 and 2.1.330.
 */
export function expectedPrompt(typed: string): string {
  return typed.replace(/\t/g, "    ").trimEnd();
}

/** Index of the first UTF-16 unit where `a` and `b` differ, or -1 when they are equal. */
export function firstDifference(a: string, b: string): number {
  if (a === b) return -1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return i;
  return n;
}

/** A short window of `s` around `at`, invisible and control characters but newline spelled out (JSON shows "\n"). */
export function excerpt(s: string, at: number, radius = 20): string {
  const from = Math.max(0, at - radius);
  const body = s
    .slice(from, at + radius)
    .replace(/[^\P{Cc}\n]|[\p{Cf}\u2028\u2029]/gu, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`);
  return `${from > 0 ? "…" : ""}${body}${at + radius < s.length ? "…" : ""}`;
}

/**
 * The check of one delivery: undefined when Claude Code received what was typed (allowing the measured
 * transforms), else the error to report. `received` is the UserPromptSubmit hook's `prompt`.
 */
export function deliveryMismatch(sessionId: string, typed: string, received: string): SessionError | undefined {
  const want = expectedPrompt(typed);
  // A terminal that keeps the tab (or the trailing blank) delivered the text intact as well.
  received = expectedPrompt(received);
  const at = firstDifference(want, received);
  if (at < 0) return undefined;
  const missing = received.length < want.length && want.startsWith(received);
  return new SessionError(
    "PROCESS_ERROR",
    `session ${sessionId}: Claude Code received a different prompt than was sent: expected ${want.length} characters, ` +
      `got ${received.length}, first difference at position ${at} (sent ${JSON.stringify(excerpt(want, at))}, received ` +
      `${JSON.stringify(excerpt(received, at))}).` +
      (missing ? ` The last ${want.length - received.length} characters are missing.` : "") +
      " The turn runs with the received text.",
    {
      suggestion:
        "Stop that turn with interrupt_session if it must not run, then send the message again. If this repeats, the terminal " +
        "is too slow for the paste: look at stream_output mode screen.",
      details: { expected_chars: want.length, received_chars: received.length, first_difference_at: at },
    },
  );
}

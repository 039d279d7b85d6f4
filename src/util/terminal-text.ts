/**
 * Text from outside (a session's reply, screen or error, a node's words, a file or team name, a model id) on its way
 * to the operator's terminal or log: every control character (C0, DEL, C1) and every invisible formatting character
 * (bidirectional overrides and isolates, zero-width characters, U+2028/U+2029, the BOM, tag characters) is written
 * as a JSON-style escape (`\u001b`), so nothing printed can move the cursor, retitle the window, ring the bell,
 * change the clipboard (OSC 52), or hide and reorder what the operator reads. The only characters left out are the
 * zero-width joiner and non-joiner, which join emoji and words. The CLI's JSON output (audit, --json) goes through
 * it too: the escapes are valid JSON and decode to the same text.
 */
import { stripVTControlCharacters } from "node:util";

/** Control and invisible formatting characters (ZWJ and ZWNJ excepted). */
const UNSAFE = /[\p{Cc}\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu;
/** The same, but newline and tab kept (multi-line text: a reply, a report). */
const UNSAFE_KEEP_LINES = /[^\P{Cc}\n\t]|[\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu;

const NAMED: Record<string, string> = { "\n": "\\n", "\t": "\\t", "\r": "\\r" };

function escape(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  // Each UTF-16 unit (a tag character is two), as JSON spells it.
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/** One line (a field of a table, a log message): every control character escaped, newline and tab too. */
export function safeLine(s: string): string {
  return s.replace(UNSAFE, escape);
}

/** Text of several lines: as safeLine, but newline and tab kept. */
export function safeText(s: string): string {
  return s.replace(UNSAFE_KEEP_LINES, escape);
}

/**
 * Screen or log text brief enough for an error message and state.json: control sequences and lines
 * that are blank or only box drawing, rules and spinners go, then the last lines that fit in `maxChars`
 * (a single longer line keeps its end). Never the 2,000 characters of raw screen that used to be stored.
 */
export function briefText(text: string, maxChars = 500, maxLines = 8): string {
  const lines = stripVTControlCharacters(text)
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .filter((l) => /[\p{L}\p{N}]/u.test(l) && !/^[─━═│┃╭╮╰╯┌┐└┘├┤┬┴┼\s\-_=*·•✻✶✳✢⎿❯>]+$/u.test(l));
  const out: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0 && out.length < maxLines; i--) {
    const l = lines[i]!;
    const add = l.length + (out.length ? 1 : 0);
    if (size + add > maxChars) {
      if (!out.length) out.push("…" + l.slice(l.length - (maxChars - 1)));
      break;
    }
    out.unshift(l);
    size += add;
  }
  return out.join("\n");
}

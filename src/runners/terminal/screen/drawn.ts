/**
 * Whether a paste is drawn in Claude Code's input box, told by content the screen can identify. A prompt is pasted
 * in pieces (prompt.ts); Claude Code takes each piece whole and in order, so the box proves the whole text is in once
 * it shows something only the last piece can have put there: all of the text (the box read whole, its characters
 * counted), or the text's end when that end occurs nowhere else in the text. Repeated text ("x" × 5,000, identical log
 * lines) in a box too tall to read whole has no such end: there the last character goes alone (delivery.ts).
 *
 * The box (2.1.197 and 2.1.330): a full-width rule, `❯ ` and the text wrapped with two spaces of indent, a closing
 * rule. A box taller than its limit (about 20 lines) shows its last lines under a rule that says `─── ↑ N more ───`.
 * An input longer than the CLI's limit (about 10,000 characters; 2.1.197 to 2.1.331) shows its first and last 500
 * characters around `[...Truncated text #1 +N lines...]`; the prompt is whole when it is submitted.
 */

export interface InputBox {
  /** The box's lines without their two-column prefix (`❯ ` or indent), right-trimmed, joined with "\n". */
  text: string;
  /** Lines scrolled out of the box (`↑ N more`), 0 when all are shown. */
  hidden: number;
  /** The CLI shows the input's middle as a `[...Truncated text …]` placeholder: its end is drawn, not all of it. */
  truncated: boolean;
}

/** The placeholder with its spaces gone (it may wrap onto the next line of the box). */
const TRUNCATED = /\[\.\.\.Truncatedtext#\d+\+\d+lines\.\.\.\]/;

const RULE = /^─{3,}(?: ↑ (\d+) more ─+)?\s*$/;

/** The input box on `screen` (the last two rules and what is between), or undefined when none is drawn. */
export function inputBox(screen: string): InputBox | undefined {
  const lines = screen.split("\n");
  const rules: number[] = [];
  lines.forEach((l, i) => {
    if (l.length >= 20 && RULE.test(l)) rules.push(i);
  });
  if (rules.length < 2) return undefined;
  const [a, b] = [rules.at(-2)!, rules.at(-1)!];
  const box = lines.slice(a + 1, b);
  const hidden = Number(RULE.exec(lines[a]!)?.[1] ?? 0);
  if (!box[0] || (hidden === 0 && !/^❯(\s|$)/.test(box[0])) || (hidden > 0 && !/^ {2}/.test(box[0]))) return undefined;
  const text = box.map((l) => l.replace(/^(?:❯ ?| {2})/, "").trimEnd()).join("\n");
  return { text, hidden, truncated: TRUNCATED.test(visibleChars(text)) };
}

/**
 * The end of an input box whose top is scrolled off the screen (2.1.197 draws a tall box whole): the lines above the
 * last rule, up to the rule before it or the top of the screen. Undefined when no rule is drawn.
 */
export function boxEnd(screen: string): string | undefined {
  const lines = screen.split("\n");
  let b = -1;
  for (let i = lines.length - 1; i >= 0 && b < 0; i--) if (lines[i]!.length >= 20 && RULE.test(lines[i]!)) b = i;
  if (b < 0) return undefined;
  let a = b - 1;
  while (a >= 0 && !(lines[a]!.length >= 20 && RULE.test(lines[a]!))) a--;
  return lines
    .slice(a + 1, b)
    .map((l) => l.replace(/^(?:❯ ?| {2})/, "").trimEnd())
    .join("\n");
}

/** The characters a terminal shows for `s`: whitespace (the box wraps and indents) and invisible format characters go. */
export function visibleChars(s: string): string {
  return s.replace(/[\s\p{Cf}]/gu, "");
}

/**
 * The characters a terminal gives back as they were sent, whitespace gone (the box wraps and indents, a tab is drawn
 * as spaces): canonical decomposition, then no combining marks, format, private-use or unassigned characters and
 * nothing beyond the BMP (emoji: terminals draw them unevenly). Both sides of a comparison go through it, so what it
 * keeps is compared exactly — and counted: a box whose even characters equal the text's holds every piece that has one.
 */
export function evenChars(s: string): string {
  return s.normalize("NFD").replace(/[\s\p{M}\p{Cf}\p{Co}\p{Cn}\u{10000}-\u{10FFFF}]/gu, "");
}

/** How many even characters of the text's end are looked for at the box's end. */
export const TAIL_CHARS = 32;

/** The text's end (its last TAIL_CHARS even characters) occurs nowhere else in it: seeing it proves the end is drawn. */
export function endIsUnique(text: string): boolean {
  const v = evenChars(text);
  const tail = v.slice(-TAIL_CHARS);
  return tail !== "" && v.indexOf(tail) === v.length - tail.length;
}

/**
 * The box on `screen` ends with the text's end (its last TAIL_CHARS even characters): the box read on screen, or —
 * its top scrolled away — the lines right above its closing rule. Proof the text is in only when that end is unique.
 */
export function showsEnd(screen: string, text: string): boolean {
  const tail = evenChars(text).slice(-TAIL_CHARS);
  if (!tail) return false;
  const box = inputBox(screen);
  const end = box ? box.text : boxEnd(screen);
  return end !== undefined && evenChars(end).endsWith(tail);
}

/**
 * Text whose visible characters a terminal draws one per cell, so that counting them on screen is exact: no
 * combining marks, format or private-use characters, variation selectors or characters beyond the BMP (emoji).
 */
export function countable(s: string): boolean {
  return !/[\p{M}\p{Cf}\p{Co}\p{Cn}\u{10000}-\u{10FFFF}]/u.test(s);
}

/** What identifies the box's drawn state: anything the piece adds (characters, lines, scrolled lines) changes it. */
export function boxSignature(screen: string): string {
  const box = inputBox(screen);
  return box ? `${box.hidden}\n${box.text}` : screen;
}

/**
 * The box on `screen` holds exactly `text` as far as its even characters go: the whole box is on screen (not scrolled)
 * and its even characters equal the text's, counted. Unambiguous even for repeated text; the caller makes sure the
 * text's last piece has an even character (else a box missing that piece looks the same).
 */
export function showsExactly(screen: string, text: string): boolean {
  const box = inputBox(screen);
  const want = evenChars(text);
  return box !== undefined && box.hidden === 0 && !box.truncated && want !== "" && evenChars(box.text) === want;
}

/**
 * The box on `screen` shows the text typed so far (`sofar`, whose last paste was `piece`), drawn after the screen
 * whose signature was `before`.
 */
export function showsDrawn(screen: string, sofar: string, piece: string, before: string): boolean {
  const want = visibleChars(sofar);
  if (!want) return false;
  const box = inputBox(screen);
  const sig = box ? `${box.hidden}\n${box.text}` : screen;
  // A piece with something to see must change the box (a piece of blanks changes its lines).
  if (sig === before && visibleChars(piece) !== "") return false;
  const tail = want.slice(-24);
  if (!box) {
    // The box's end, right above its closing rule: the text's end must be the box's end, not just somewhere on screen.
    const end = boxEnd(screen);
    return end !== undefined ? visibleChars(end).endsWith(tail) : visibleChars(screen).includes(tail);
  }
  const shown = visibleChars(box.text);
  if (box.hidden === 0 && !box.truncated && countable(sofar)) return shown.length === want.length && shown === want;
  return shown.endsWith(tail);
}

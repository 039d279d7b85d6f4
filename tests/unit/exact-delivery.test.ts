/**
 * Delivery is byte-exact or an error (issue 19 item 13): the comparison of what was typed with UserPromptSubmit's
 * prompt, and the screen checks that pace the paste, on real screens of the CLI (tests/fixtures/screens/paste-*:
 * "x" × 5,000 in 2.1.330's box, which shows its last 20 lines under "↑ 6 more"; 100 identical log lines in 2.1.197's
 * box read with its scrollback; 20,000 characters of one word in 2.1.197, taller than the screen; 200 numbered log lines
 * in 2.1.330's capped box; a prompt of the send bench with emoji, CJK and code in 2.1.330's box, read whole).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import {
  boxSignature,
  countable,
  endIsUnique,
  evenChars,
  inputBox,
  showsDrawn,
  showsEnd,
  showsExactly,
  visibleChars,
} from "../../src/runners/terminal/screen/drawn.js";
import { provableWhole, showsPasted } from "../../src/runners/terminal/delivery.js";
import { deliveryMismatch, excerpt, expectedPrompt, firstDifference } from "../../src/runners/terminal/screen/exact.js";
import { pastePieces, preparePrompt } from "../../src/runners/terminal/screen/prompt.js";

const sample = (name: string) => readFileSync(join(import.meta.dirname, "..", "fixtures", "screens", name), "utf8");
const LOG_TEXT = "L1 " + "2026-11-25 ERROR same line\n".repeat(100) + "LAST";

describe("comparing what Claude Code received with what was typed", () => {
  it("allows only the measured transforms: a tab arrives as four spaces, trailing whitespace is trimmed", () => {
    expect(expectedPrompt("a\tb")).toBe("a    b");
    expect(expectedPrompt("  lead stays  \t ")).toBe("  lead stays");
    expect(deliveryMismatch("s1", "a\tb  ", "a    b")).toBeUndefined();
    expect(deliveryMismatch("s1", "x".repeat(5000), "x".repeat(5000))).toBeUndefined();
    // A terminal that keeps the tab (the fake claude, a plain pty reader) delivered the text intact too.
    expect(deliveryMismatch("s1", "\t#not memory", "\t#not memory")).toBeUndefined();
    expect(deliveryMismatch("s1", "a\tb", "a\tc")).toBeDefined();
  });

  it("a prompt missing its last piece is a PROCESS_ERROR naming the sizes and the first difference", () => {
    const e = deliveryMismatch("s1", "x".repeat(5000), "x".repeat(4900));
    expect(e).toBeInstanceOf(SessionError);
    expect(e!.code).toBe("PROCESS_ERROR");
    expect(e!.message).toContain("expected 5000 characters, got 4900, first difference at position 4900");
    expect(e!.message).toContain("The last 100 characters are missing");
    expect(e!.details).toEqual({ expected_chars: 5000, received_chars: 4900, first_difference_at: 4900 });
    expect(e!.suggestion).toMatch(/interrupt_session/);
  });

  it("any other difference is named with both sides around it, invisible characters spelled out", () => {
    const e = deliveryMismatch("s1", "hello world", "hello\u200bworld")!;
    expect(e.message).toContain("expected 11 characters, got 11, first difference at position 5");
    expect(e.message).toContain("<U+200B>");
    expect(firstDifference("abc", "abc")).toBe(-1);
    expect(firstDifference("abc", "abd")).toBe(2);
    expect(firstDifference("ab", "abc")).toBe(2);
    expect(excerpt("line\nnext", 4)).toBe("line\nnext");
    expect(excerpt("a\tb\u200bc", 1)).toBe("a<U+0009>b<U+200B>c");
  });
});

describe("invisible characters the CLI does not deliver are refused before anything is typed", () => {
  const rules = { maxChars: 100_000, allowBashMode: false };
  for (const [ch, name] of [
    ["\u200b", "U+200B (ZERO WIDTH SPACE)"],
    ["\ufeff", "U+FEFF (ZERO WIDTH NO-BREAK SPACE (BOM))"],
    ["\u2028", "U+2028 (LINE SEPARATOR)"],
    ["\u202e", "U+202E (a bidirectional formatting character)"],
  ] as const) {
    it(`${name} at the start or in the middle`, () => {
      for (const [text, at] of [
        [`${ch}hello`, 0],
        [`he${ch}llo`, 2],
      ] as const) {
        const e = (() => {
          try {
            preparePrompt(text, rules);
          } catch (x) {
            return x as SessionError;
          }
          throw new Error("not refused");
        })();
        expect(e.code).toBe("INVALID_ARGUMENT");
        expect(e.message).toContain(`${name} at position ${at}`);
        expect(e.details).toMatchObject({ position: at, code_point: ch.codePointAt(0) });
      }
    });
  }
  it("ZWJ inside an emoji, no-break spaces and tabs are text", () => {
    expect(preparePrompt("emoji 👩‍💻 zwj", rules)).toBe("emoji 👩‍💻 zwj");
    expect(preparePrompt("a\u00a0b\tc", rules)).toBe("a\u00a0b\tc");
  });
});

describe("pacing the paste by what the screen can identify (real screens)", () => {
  it("2.1.330 caps the box at 20 lines under '↑ N more': read, and never taken as the whole text", () => {
    const sc = sample("paste-capped-2.1.330.txt");
    const box = inputBox(sc)!;
    expect(box.hidden).toBe(6);
    expect(visibleChars(box.text)).toBe("x".repeat(visibleChars(box.text).length));
    expect(showsExactly(sc, "x".repeat(5000))).toBe(false);
    // Its end is drawn only when the box changed after the last piece: the same screen again proves nothing.
    const other = sc.replace("↑ 6 more", "↑ 5 more");
    expect(showsDrawn(sc, "x".repeat(5000), "x", boxSignature(other))).toBe(true);
    expect(showsDrawn(sc, "x".repeat(5000), "x", boxSignature(sc))).toBe(false);
  });

  it("2.1.197 with its scrollback: repeated lines missing their last piece are told apart (the end alone cannot)", () => {
    const sc = sample("paste-tall-scrollback-2.1.197.txt");
    expect(showsExactly(sc, LOG_TEXT)).toBe(true);
    const short = LOG_TEXT.slice(0, LOG_TEXT.length - "\n2026-11-25 ERROR same line\nLAST".length) + "\nLAST";
    expect(showsExactly(sc, short)).toBe(false);
    const repeated = "2026-11-25 ERROR same line\n".repeat(100).trimEnd();
    // The check by the text's end, used before: it cannot tell 99 lines from 100.
    expect(showsPasted(sc.replace("LAST", "2026-11-25 ERROR same line"), repeated.slice(0, -27))).toBe(true);
    expect(showsExactly(sc.replace("LAST", "2026-11-25 ERROR same line"), repeated.slice(0, -27))).toBe(false);
  });

  it("2.1.197 taller than the screen: no box to read; drawn only when the screen changed and shows the end", () => {
    const sc = sample("paste-tall-2.1.197.txt");
    const text = "word ".repeat(4000) + "end";
    expect(inputBox(sc)).toBeUndefined();
    expect(showsExactly(sc, text)).toBe(false);
    expect(showsDrawn(sc, text, "d", boxSignature(sc))).toBe(false);
    expect(showsDrawn(sc, text, "d", boxSignature(sc.replace("word end", "word en")))).toBe(true);
    // The box's end counts, not the text's end somewhere on screen: "…word en" is inside "…word end" but not its end.
    expect(showsDrawn(sc, text.slice(0, -1), "", "")).toBe(false);
    expect(showsDrawn(sc, text, "", "")).toBe(true);
  });
});

describe("what the screen proves about a paste sent whole (real screens)", () => {
  const LINES = Array.from({ length: 200 }, (_, i) => `2026-11-25 INFO request ${i + 1} of 200 served`).join("\n");

  it("even characters: what a terminal gives back as sent, canonically the same, whitespace and emoji left out", () => {
    expect(evenChars("caf\u00e9 e\u0301")).toBe(evenChars("cafe\u0301 \u00e9"));
    expect(evenChars("a 👩\u200d💻 🇫🇷 ☀\ufe0f\tb\u00a0c\n日本")).toBe("a☀bc日本");
  });

  it("repeated text cannot be proven whole by its end; text with a unique end, or a single paste, can", () => {
    for (const t of [
      "x".repeat(5000),
      "ab".repeat(3000),
      "2026-11-25 ERROR same line\n".repeat(200).trimEnd(),
      "word ".repeat(4000).trimEnd(),
    ]) {
      expect(endIsUnique(t)).toBe(false);
      expect(provableWhole(t)).toBe(false);
    }
    expect(endIsUnique(LINES)).toBe(true);
    expect(provableWhole(LINES)).toBe(true);
    // One paste is taken whole: any of it drawn is all of it, repeated or not.
    expect(pastePieces("ab".repeat(300))).toHaveLength(1);
    expect(provableWhole("ab".repeat(300))).toBe(true);
    // A last piece with nothing a terminal draws evenly (an emoji alone) leaves nothing to see: the last character goes alone.
    expect(pastePieces("a".repeat(700) + "😀")).toEqual(["a".repeat(700), "😀"]);
    expect(provableWhole("a".repeat(700) + "😀")).toBe(false);
  });

  it("2.1.330's capped box with 200 numbered lines: the unique end shows; a box missing the last piece does not", () => {
    const sc = sample("paste-lines-2.1.330.txt");
    expect(inputBox(sc)!.hidden).toBe(180);
    expect(showsExactly(sc, LINES)).toBe(false);
    expect(showsEnd(sc, LINES)).toBe(true);
    const short = sc.replace("\n  2026-11-25 INFO request 200 of 200 served", "");
    expect(showsEnd(short, LINES)).toBe(false);
    // The end is the box's end, not a line somewhere on screen.
    expect(showsEnd(sc, LINES.slice(0, LINES.lastIndexOf("\n")))).toBe(false);
  });

  it("2.1.330's box with emoji, CJK, a flag and code, read whole: counted by its even characters, to the last one", () => {
    const sc = sample("paste-mixed-2.1.330.txt");
    const text = sample("paste-mixed-2.1.330.prompt.txt");
    expect(countable(text)).toBe(false); // the count before: such text waited for a still screen (300 ms)
    expect(provableWhole(text)).toBe(true);
    expect(showsExactly(sc, text)).toBe(true);
    expect(showsEnd(sc, text)).toBe(true);
    expect(showsExactly(sc, text.slice(0, text.lastIndexOf("\n")))).toBe(false);
    expect(showsExactly(sc, text + " x")).toBe(false);
  });

  it("2.1.197 shows a long input's middle as '[...Truncated text …]': never counted, told drawn by its end", () => {
    const sc = sample("paste-truncated-2.1.197.txt");
    const text = "word ".repeat(4000).trimEnd();
    const head = text.slice(0, -1);
    const box = inputBox(sc)!;
    expect(box).toMatchObject({ hidden: 0, truncated: true });
    expect(showsExactly(sc, head)).toBe(false);
    // Counting such a box waited the whole paste time (10 s) and then pressed Enter: the last character could be lost.
    expect(showsDrawn(sc, head, "", "")).toBe(true);
    expect(showsDrawn(sc, text, "d", boxSignature(sc))).toBe(false);
    const at = sc.lastIndexOf("wor");
    const after = sc.slice(0, at) + "word" + sc.slice(at + 3);
    expect(showsDrawn(after, text, "d", boxSignature(sc))).toBe(true);
    expect(showsEnd(after, text)).toBe(true);
  });
});

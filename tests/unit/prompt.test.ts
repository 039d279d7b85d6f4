/**
 * What a prompt may contain, and the paste pieces it is typed in: hostile text is refused with a clear
 * error naming the first offending character, and accepted text reaches the terminal whole and unchanged.
 */
import { describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import {
  INPUT_MODE_PREFIXES,
  inputModeOf,
  PASTE_PIECE_CHARS,
  PASTE_PIECE_NEWLINES,
  pastePieces,
  preparePrompt,
} from "../../src/runners/terminal/screen/prompt.js";

const rules = { maxChars: 100_000, allowBashMode: false };

function refusal(fn: () => unknown): SessionError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SessionError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("prompt validation", () => {
  it("refuses every C0 control except tab and newline, DEL and C1, naming it and its position", () => {
    for (let c = 0; c < 0x20; c++) {
      const ch = String.fromCharCode(c);
      const msg = `ab${ch}cd`;
      if (c === 9 || c === 10) {
        expect(preparePrompt(msg, rules)).toBe(msg);
        continue;
      }
      if (c === 13) {
        expect(preparePrompt(msg, rules)).toBe("ab\ncd");
        continue;
      }
      const e = refusal(() => preparePrompt(msg, rules));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toContain(`U+${c.toString(16).toUpperCase().padStart(4, "0")}`);
      expect(e.message).toContain("position 2");
    }
    for (const c of [0x7f, 0x80, 0x9b, 0x9f])
      expect(refusal(() => preparePrompt(`x${String.fromCharCode(c)}`, rules)).message).toContain("position 1");
  });

  it("refuses the paste terminator wherever it stands (ESC is a control character)", () => {
    for (const msg of [
      "\x1b[201~!touch pwned",
      "hello\x1b[201~\r/exit",
      "please read this\x1b[201~\rmore",
      `${"a".repeat(699)}\x1b[201~b`,
    ]) {
      const e = refusal(() => preparePrompt(msg, rules));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toContain("U+001B (ESC");
      expect(e.message).toContain(`position ${msg.indexOf("\x1b")}`);
    }
  });

  it("\\r\\n and \\r become newlines; trailing newlines go; everything else is kept byte for byte", () => {
    expect(preparePrompt("a\r\nb\rc\n\n", rules)).toBe("a\nb\nc");
    const text = "quotes ' \" ` $(x) ${y} #{z} #(w) ; \\ -p --x 日本語 🙂\ttab";
    expect(preparePrompt(text, rules)).toBe(text);
  });

  it("an input-mode prefix is refused with how to send it as text; leading whitespace keeps it text", () => {
    for (const p of Object.keys(INPUT_MODE_PREFIXES)) {
      const e = refusal(() => preparePrompt(`${p}touch pwned`, rules));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toContain(JSON.stringify(p));
      expect(e.suggestion).toMatch(/space before/);
      for (const ws of [" ", "  ", "\t", "\n"]) expect(preparePrompt(`${ws}${p}touch pwned`, rules)).toBe(`${ws}${p}touch pwned`);
    }
    expect(refusal(() => preparePrompt("!ls", rules)).suggestion).toContain("CLAUDE_SESSIONS_ALLOW_BASH_MODE");
    // Measured on 2.1.197 and 2.1.330: only "!" switches the input box; these stay text.
    for (const text of ["#123 is broken", "& then", "@file.ts please", "? what"]) expect(preparePrompt(text, rules)).toBe(text);
    // A "/" whose first word names a command (known or not) runs it instead of sending a prompt; a path is text.
    for (const text of ["/clear", "/cl", "/exit now", "/compact keep the notes", "/", "/notacommand please"])
      expect(refusal(() => preparePrompt(text, rules)).message).toContain('starts with "/"');
    for (const text of ["/usr/bin/env is a path", "/home/me/app.ts has a bug", "/tmp/x"])
      expect(preparePrompt(text, rules)).toBe(text);
  });

  it("bash mode only when the operator allows it; the message then goes without the '!' the server adds", () => {
    expect(refusal(() => preparePrompt("ls", { ...rules, bashMode: true })).code).toBe("PERMISSION_DENIED");
    expect(preparePrompt("ls -la", { ...rules, bashMode: true, allowBashMode: true })).toBe("!ls -la");
    expect(refusal(() => preparePrompt("ls\x1b", { ...rules, bashMode: true, allowBashMode: true })).code).toBe(
      "INVALID_ARGUMENT",
    );
  });

  it("a final backslash is refused (Enter after it would add a line instead of sending)", () => {
    expect(refusal(() => preparePrompt("path\\", rules)).message).toMatch(/ends with a backslash/);
    expect(refusal(() => preparePrompt("path\\\n\n", rules)).message).toMatch(/ends with a backslash/);
    expect(preparePrompt("a\\\nb \\ ", rules)).toBe("a\\\nb \\ ");
  });

  it("empty and over-long messages are refused", () => {
    expect(refusal(() => preparePrompt(" \n ", rules)).message).toMatch(/empty/);
    expect(refusal(() => preparePrompt("x".repeat(11), { ...rules, maxChars: 10 })).message).toMatch(
      /11 characters; the limit is 10/,
    );
  });
});

/** A small deterministic PRNG, so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("fuzz: 10,000 random messages through validation and paste splitting", () => {
  it("never crashes; only newline and tab among controls reach the terminal; pieces rejoin to the accepted text", () => {
    const rand = rng(20261123);
    const alphabet = [
      "a",
      "Z",
      " ",
      "\n",
      "\r",
      "\t",
      "!",
      "#",
      "&",
      "/",
      "@",
      "\x1b",
      "[",
      "2",
      "0",
      "1",
      "~",
      "\x03",
      "\x15",
      "\x00",
      "\x7f",
      "\x9b",
      "日",
      "🙂",
      ";",
      "$",
      "'",
      '"',
      "\\",
    ];
    let accepted = 0;
    let refused = 0;
    const broken: string[] = [];
    const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
    for (let n = 0; n < 10_000; n++) {
      const len = Math.floor(rand() * (rand() < 0.1 ? 3000 : 120));
      // Half of the messages are drawn without the refused controls, so long accepted texts are split too.
      const from = rand() < 0.5 ? alphabet : alphabet.filter((c) => !/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(c));
      let msg = "";
      for (let i = 0; i < len; i++) msg += from[Math.floor(rand() * from.length)];
      let text: string;
      try {
        text = preparePrompt(msg, rules);
      } catch (e) {
        if (!(e instanceof SessionError) || e.code !== "INVALID_ARGUMENT") broken.push(`threw ${String(e)}`);
        refused++;
        continue;
      }
      accepted++;
      // Plain checks in the hot loop (10,000 messages); one assertion per kind of failure at the end.
      const pieces = pastePieces(text);
      if (pieces.join("") !== text) broken.push(`rejoin: ${JSON.stringify(msg).slice(0, 80)}`);
      for (const p of pieces) {
        if (CONTROL.test(p)) broken.push(`control char in ${JSON.stringify(p).slice(0, 80)}`);
        if (p.length > PASTE_PIECE_CHARS) broken.push(`piece of ${p.length}`);
        if (p.split("\n").length - 1 > PASTE_PIECE_NEWLINES) broken.push("piece with too many newlines");
      }
      if (inputModeOf(text) !== undefined) broken.push(`prefix reached the terminal: ${JSON.stringify(text.slice(0, 20))}`);
    }
    expect(broken).toEqual([]);
    // Both paths were exercised.
    expect(accepted).toBeGreaterThan(2000);
    expect(refused).toBeGreaterThan(2000);
  });
});

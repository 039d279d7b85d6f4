/** util/terminal-text.ts: what the CLI and the logs print of outside text. */
import { describe, expect, it } from "vitest";
import { safeLine, safeText } from "../../src/util/terminal-text.js";

describe("outside text on a terminal", () => {
  const hostile = "a\x1b]0;t\x07b\x9b31m\u202eevil\u2066\u200b\ufeff\u{e0041}\x7f\r\n\tend";

  it("escapes C0, DEL, C1 and invisible formatting characters as JSON does; safeText keeps newline and tab", () => {
    expect(safeLine(hostile)).toBe(
      "a\\u001b]0;t\\u0007b\\u009b31m\\u202eevil\\u2066\\u200b\\ufeff\\udb40\\udc41\\u007f\\r\\n\\tend",
    );
    expect(safeText(hostile)).toBe(
      "a\\u001b]0;t\\u0007b\\u009b31m\\u202eevil\\u2066\\u200b\\ufeff\\udb40\\udc41\\u007f\\r\n\tend",
    );
  });

  it("leaves ordinary text, emoji with joiners and accents alone; JSON escaped again decodes to the same value", () => {
    const plain = "café 👨‍👩‍👧 日本語 — ok";
    expect(safeLine(plain)).toBe(plain);
    expect(JSON.parse(safeText(JSON.stringify({ v: hostile })))).toEqual({ v: hostile });
    expect(safeText(safeText(hostile))).toBe(safeText(hostile));
  });
});

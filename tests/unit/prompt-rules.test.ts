/**
 * A prompt's rules come from its runner's capabilities (runners/prompt.ts, sessions/checks.ts): what Claude Code's
 * input box must refuse (a leading "!", control characters, invisible characters, a final backslash) reaches a
 * headless session's conversation as given — measured on the real CLI, see tests/e2e/headless-prompts.test.ts — while
 * a leading slash command stays refused for both, and bash_mode keeps the input box's rules.
 */
import { describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import { HEADLESS_CAPS } from "../../src/runners/headless/runner.js";
import { preparePromptFor } from "../../src/runners/prompt.js";
import { ANY_RUNNER, checkPrompt } from "../../src/sessions/checks.js";
import { loadConfig } from "../../src/config.js";

const rules = { maxChars: 1000, allowBashMode: false };
const cfg = loadConfig({ CLAUDE_SESSIONS_DIR: "/nonexistent/cs-prompt-rules", HOME: "/nonexistent" });

function refusal(fn: () => unknown): SessionError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SessionError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

/** Text the input box must refuse (each for its reason in terminal/screen/prompt.ts) and a message carries exactly. */
const INPUT_BOX_ONLY = [
  "!echo hi",
  "nul \x00 esc \x1b[201~ bell \x07 ctrl-c \x03 del \x7f c1 \x85",
  "zw\u200bsp bidi\u202e bom\ufeff ls\u2028ps\u2029 soft\u00ad",
  "ends with a backslash\\",
  "crlf\r\nline\r\n\n",
];

describe("prompt rules by runner", () => {
  it("the input box refuses what a headless message delivers as given", () => {
    for (const p of INPUT_BOX_ONLY) {
      expect(preparePromptFor("message", p, rules), JSON.stringify(p)).toBe(p);
      expect(checkPrompt(cfg, p, "message", false, HEADLESS_CAPS)).toBe(p);
      // The terminal refuses it or, for line ends, changes it (it is typed, then submitted by Enter).
      const typed = (() => {
        try {
          return preparePromptFor("input-box", p, rules);
        } catch (e) {
          return e;
        }
      })();
      if (p.startsWith("crlf")) expect(typed).toBe("crlf\nline");
      else expect(typed, JSON.stringify(p)).toBeInstanceOf(SessionError);
      // No runner named (Claude Code's own sessions, a call before the session is known): the input box's rules.
      if (!p.startsWith("crlf")) expect(refusal(() => checkPrompt(cfg, p, "message")).code).toBe("INVALID_ARGUMENT");
    }
  });

  it("a slash command, an empty or an over-long prompt is refused for every runner, before the session is known", () => {
    for (const input of ["message", "input-box"] as const) {
      expect(refusal(() => preparePromptFor(input, "/clear", rules)).message).toContain('starts with "/"');
      expect(refusal(() => preparePromptFor(input, "/cl now", rules)).code).toBe("INVALID_ARGUMENT");
      expect(refusal(() => preparePromptFor(input, " \n ", rules)).message).toContain("empty");
      expect(refusal(() => preparePromptFor(input, "x".repeat(1001), rules)).message).toContain("limit is 1000");
      // A path is text.
      expect(preparePromptFor(input, "/usr/bin/env is a path", rules)).toBe("/usr/bin/env is a path");
    }
    expect(refusal(() => checkPrompt(cfg, "/exit", "message", false, ANY_RUNNER)).code).toBe("INVALID_ARGUMENT");
  });

  it("bash_mode keeps the input box's rules on every runner (the operator's switch first)", () => {
    expect(refusal(() => preparePromptFor("message", "ls", { ...rules, bashMode: true })).code).toBe("PERMISSION_DENIED");
    expect(preparePromptFor("message", "ls", { ...rules, bashMode: true, allowBashMode: true })).toBe("!ls");
    expect(refusal(() => preparePromptFor("message", "ls \x1b", { ...rules, bashMode: true, allowBashMode: true })).code).toBe(
      "INVALID_ARGUMENT",
    );
  });
});

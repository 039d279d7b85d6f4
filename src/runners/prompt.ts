/**
 * A prompt's rules come from how its runner delivers it (Capabilities.prompts). Typed into Claude Code's input box
 * (tmux, pty): the terminal's rules (terminal/screen/prompt.ts: no control characters, no leading "!", no invisible
 * characters, no final backslash; line ends normalised). Sent as a user message over stream-json (headless): the
 * text arrives as given, so only what the CLI itself would act on is refused.
 *
 * Measured on 2.1.197, 2.1.330 and 2.1.331 (2026-11-25), each prompt pushed through the Agent SDK's streaming input
 * to the real CLI against the mock API: a leading "!" (`!touch f` ran nothing; the API got the text), NUL, ESC,
 * `ESC [ 2 0 1 ~`, BEL, ETX, DEL, C1 controls, U+200B, U+202E, U+FEFF, U+2028/U+2029, U+00AD, a final backslash,
 * CR LF and trailing newlines all reached the API byte for byte. A leading "/" naming a command did not: `/clear`
 * ran the command and sent nothing (the SDK's prompts are not client_composed), so it stays refused.
 */
import { SessionError } from "../core/errors.js";
import { inputModeOf, preparePrompt, type PromptRules } from "./terminal/screen/prompt.js";

export type { PromptRules };

/** How a runner's prompts reach the conversation. */
export type PromptInput = "input-box" | "message";

/** A user message over stream-json: refused only when empty, too long, or a Claude Code command. Returned as given. */
export function prepareMessage(message: string, rules: PromptRules): string {
  // bash_mode is the input box's: the same checks, then the driver refuses it (a headless session has no screen).
  if (rules.bashMode) return preparePrompt(message, rules);
  const what = rules.what ?? "message";
  if (!message.trim()) throw new SessionError("INVALID_ARGUMENT", `the ${what} is empty.`);
  if (message.length > rules.maxChars) {
    throw new SessionError("INVALID_ARGUMENT", `the ${what} has ${message.length} characters; the limit is ${rules.maxChars}.`, {
      suggestion: "Write long material to a file in the session's cwd and ask Claude to read it.",
    });
  }
  if (message[0] === "/" && inputModeOf(message) !== undefined) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the ${what} starts with "/", which Claude Code takes as ${inputModeOf(message)}; nothing was sent.`,
      {
        suggestion: 'To send it as text, put a space before the "/". compact_session and reset_session run /compact and /clear.',
      },
    );
  }
  return message;
}

/** The text a runner delivers for `message`, or INVALID_ARGUMENT / PERMISSION_DENIED (nothing is sent). */
export function preparePromptFor(input: PromptInput, message: string, rules: PromptRules): string {
  return input === "message" ? prepareMessage(message, rules) : preparePrompt(message, rules);
}

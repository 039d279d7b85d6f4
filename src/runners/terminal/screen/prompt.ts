/**
 * What a prompt may contain, and how it is cut into pastes. A prompt reaches Claude Code's input box as a
 * bracketed paste; anything that would act as a key there (a control character, the paste terminator) or
 * switch the box into another input mode (a leading "!" runs a shell command) is refused before anything
 * is sent, so text written by someone else is delivered as text or not at all.
 */
import { SessionError } from "../../../core/errors.js";

/**
 * Characters that switch Claude Code's input box into another mode when they are the first character of the input.
 * Measured by pasting every printable ASCII punctuation character into an empty input box of 2.1.197 and 2.1.330
 * (the newest release on 2026-11-23): only "!" switches ("! for shell mode"; Enter runs the rest as a shell command
 * in the session's cwd, with no permission check). "#" (memory mode in Claude Code 1.x) and "&" stay text; "@" and
 * "/" open completion menus and stay text ("/" is a command: an unknown one is refused when it is not sent).
 */
export const INPUT_MODE_PREFIXES: Readonly<Record<string, string>> = {
  "!": "bash mode (Enter runs the rest as a shell command in the session's cwd, with no permission check)",
  // Not an input mode but the same danger: "/" opens the command menu and Enter runs the command it shows
  // ("/cl" runs /clear), so forwarded text could clear the conversation, end the session or change settings.
  "/": "a command (Enter runs the Claude Code command the menu shows: /clear, /exit, /model … instead of sending a prompt)",
};

/**
 * What Claude Code's input box would make of a text that starts like this instead of a prompt, if anything. A "/"
 * counts when its first word names a command (`/clear`, `/cl`, `/foo`); a path (`/usr/bin/env is …`) stays text,
 * as the CLI itself reads it.
 */
export function inputModeOf(text: string): string | undefined {
  const first = text[0] ?? "";
  if (first === "/" && !/^\/[^\s/]*(?:\s|$)/.test(text)) return undefined;
  return INPUT_MODE_PREFIXES[first];
}

/** 2.1.330 wraps a paste of more than 800 characters or 2 newlines in <pasted_content> tags: paste smaller pieces (with a margin). */
export const PASTE_PIECE_CHARS = 700;
export const PASTE_PIECE_NEWLINES = 2;

export interface PromptRules {
  maxChars: number;
  /** Send the text as a shell command through Claude Code's bash mode (the operator must allow it). */
  bashMode?: boolean;
  /** CLAUDE_SESSIONS_ALLOW_BASH_MODE: the operator lets callers use bash mode. */
  allowBashMode: boolean;
  /** The argument's name, for error messages ("message", "prompt"). */
  what?: string;
}

/**
 * Invisible characters Claude Code does not deliver as sent, refused so that delivery is byte-exact or a clear error.
 * Measured by pasting each at the start, in the middle and at the end of a prompt (2026-11-25): 2.1.330 drops
 * U+00AD, U+200B, U+200E, U+200F, U+202A–U+202E, U+2060, U+2066–U+2069 and U+FEFF wherever they are and turns U+2028
 * and U+2029 into a newline (a bidirectional control even kept Enter from submitting); 2.1.197 keeps them. The rest
 * of U+2060–U+2064 is in 2.1.330's own list of characters it removes. ZWJ, ZWNJ and variation selectors are not
 * refused: inside an emoji or a word they arrive; alone, 2.1.330 drops them and the delivery check reports it.
 */
const INVISIBLE = /[\u00ad\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

const INVISIBLE_NAMES: Record<number, string> = {
  0xad: "SOFT HYPHEN",
  0x200b: "ZERO WIDTH SPACE",
  0x200e: "LEFT-TO-RIGHT MARK",
  0x200f: "RIGHT-TO-LEFT MARK",
  0x2028: "LINE SEPARATOR",
  0x2029: "PARAGRAPH SEPARATOR",
  0x2060: "WORD JOINER",
  0xfeff: "ZERO WIDTH NO-BREAK SPACE (BOM)",
};

function describeInvisible(ch: string): string {
  const code = ch.codePointAt(0)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const kind = code >= 0x202a && code <= 0x2069 ? "a bidirectional formatting character" : "an invisible formatting character";
  return `${hex} (${INVISIBLE_NAMES[code] ?? kind})`;
}

/** Control characters a prompt may not contain: C0 except tab and newline (CR is normalised), DEL, and C1. */
const FORBIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/u;

const C0_NAMES = [
  "NUL",
  "SOH",
  "STX",
  "ETX",
  "EOT",
  "ENQ",
  "ACK",
  "BEL",
  "BS",
  "HT",
  "LF",
  "VT",
  "FF",
  "CR",
  "SO",
  "SI",
  "DLE",
  "DC1",
  "DC2",
  "DC3",
  "DC4",
  "NAK",
  "SYN",
  "ETB",
  "CAN",
  "EM",
  "SUB",
  "ESC",
  "FS",
  "GS",
  "RS",
  "US",
];

function describeControl(ch: string): string {
  const code = ch.codePointAt(0)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  const name = code < 32 ? C0_NAMES[code] : code === 0x7f ? "DEL" : "C1 control";
  const key = code > 0 && code < 27 ? `, Ctrl-${String.fromCharCode(64 + code)}` : "";
  return `${hex} (${name}${key})`;
}

/**
 * Validates a prompt and returns the text that will be typed into the input box: line ends normalised to
 * "\n", trailing newlines dropped (a newline at the end would not be part of the prompt), and "!" put in
 * front in bash mode. (Claude Code trims other trailing whitespace itself: exact.ts allows for it.) Throws
 * INVALID_ARGUMENT / PERMISSION_DENIED and sends nothing otherwise.
 */
export function preparePrompt(message: string, rules: PromptRules): string {
  const what = rules.what ?? "message";
  if (!message.trim()) throw new SessionError("INVALID_ARGUMENT", `the ${what} is empty.`);
  if (message.length > rules.maxChars) {
    throw new SessionError("INVALID_ARGUMENT", `the ${what} has ${message.length} characters; the limit is ${rules.maxChars}.`, {
      suggestion: "Write long material to a file in the session's cwd and ask Claude to read it.",
    });
  }
  const text = message.replace(/\r\n?/g, "\n").replace(/\n+$/, "");
  const bad = FORBIDDEN.exec(text);
  if (bad) {
    // Position in the caller's own string, counted in UTF-16 units as JavaScript (and JSON) count them.
    const at = message.indexOf(bad[0]);
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the ${what} contains the control character ${describeControl(bad[0])} at position ${at}; nothing was sent.`,
      {
        suggestion:
          "A prompt is text: only newline and tab are allowed among control characters (a terminal would take the others " +
          "as keys). Remove them, or describe them in words.",
        details: { position: at, code_point: bad[0].codePointAt(0) },
      },
    );
  }
  const invisible = INVISIBLE.exec(text);
  if (invisible) {
    const at = message.indexOf(invisible[0]);
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the ${what} contains the invisible character ${describeInvisible(invisible[0])} at position ${at}, which Claude ` +
        `Code does not deliver as sent; nothing was sent.`,
      {
        suggestion:
          "Remove it (it does not show on screen), or replace U+2028/U+2029 with a newline. To pass such text on exactly, " +
          "write it to a file in the session's cwd and ask Claude to read it.",
        details: { position: at, code_point: invisible[0].codePointAt(0) },
      },
    );
  }
  if (text.endsWith("\\")) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the ${what} ends with a backslash, which Claude Code's input box reads as "continue on a new line" when Enter follows; nothing was sent.`,
      {
        suggestion: "Put any character after the final backslash (a space or a period), or end the text differently.",
      },
    );
  }
  if (rules.bashMode) {
    if (!rules.allowBashMode) {
      throw new SessionError("PERMISSION_DENIED", "bash_mode is refused by this server.", {
        suggestion:
          "The operator can allow it by starting the server with CLAUDE_SESSIONS_ALLOW_BASH_MODE=1. Bash mode runs the text " +
          "as a shell command with no permission check.",
      });
    }
    return `!${text}`;
  }
  const mode = inputModeOf(text);
  if (mode !== undefined) {
    const hint =
      text[0] === "!"
        ? 'To send it as text, put a space before the "!". To run a shell command on purpose, pass bash_mode: true with the ' +
          'command without the "!" (the server must allow it with CLAUDE_SESSIONS_ALLOW_BASH_MODE=1).'
        : text[0] === "/"
          ? 'To send it as text, put a space before the "/". Claude Code commands are not sent through this server: run them ' +
            "in the session's terminal (attach to its tmux pane)."
          : `To send it as text, put a space before the ${JSON.stringify(text[0])}.`;
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the ${what} starts with ${JSON.stringify(text[0])}, which Claude Code's input box takes as ${mode}; nothing was sent.`,
      {
        suggestion: hint,
      },
    );
  }
  return text;
}

/** Splits a prompt into pastes of at most PASTE_PIECE_CHARS characters and PASTE_PIECE_NEWLINES newlines. */
export function pastePieces(text: string): string[] {
  const out: string[] = [];
  let cur = "";
  let len = 0;
  let newlines = 0;
  for (const ch of text) {
    if ((ch === "\n" && newlines === PASTE_PIECE_NEWLINES) || len + ch.length > PASTE_PIECE_CHARS) {
      out.push(cur);
      cur = "";
      len = 0;
      newlines = 0;
    }
    cur += ch;
    len += ch.length;
    if (ch === "\n") newlines += 1;
  }
  if (cur) out.push(cur);
  return out;
}

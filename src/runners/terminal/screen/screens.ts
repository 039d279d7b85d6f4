/**
 * Screen text is a fallback signal only (hooks are the source of truth). These patterns recognise the screens
 * Claude Code shows instead of its prompt on a first run, the input box, the permission dialog and the end of an
 * interrupted turn; the timings beside them are what the real CLI (2.1.197, 2.1.330) needed.
 */
/** Start-up: the screen is read only when SessionStart is this late (first-run screens fire no hook). */
export const FIRST_RUN_PROBE_AFTER_MS = 1500;
/** Start-up: how often the screen is read while SessionStart is late. */
export const STARTUP_TICK_MS = 500;
/** A dialog ignores keys in its first moments (2.1.330: ~200 ms). */
export const DIALOG_SETTLE_MS = 250;
/** The trust screen is answered at most this often (it may take a moment to go away). */
export const TRUST_ANSWER_EVERY_MS = 2500;
/** After SessionStart, how long to wait for the input box to be drawn (2.1.330 draws it ~200 ms later). */
export const INPUT_DRAWN_MS = 3000;
/** The input box is drawn just before its key handler is attached. */
export const INPUT_HANDLER_MS = 50;
/** A process that died at start-up: how long its last output may take to reach the raw log through the pipe. */
export const RAW_LOG_SETTLE_MS = 1000;
/** How often a screen condition is polled. */
export const POLL_MS = 25;
/**
 * Delivery: how long to wait for a paste to show in the input box before pressing Enter. Measured: 2.1.330 draws the
 * box, then works 1–2 s without reading its input (after 4 parallel starts: p50 1.3–1.7 s, p95 2.0–2.9 s); 2.1.197
 * loses an Enter that arrives before the paste is drawn while it is busy. Pressing Enter only once the text shows made
 * the first Enter count in 200/200 (2.1.330) and 128/128 (2.1.197) prompts.
 */
export const PASTE_DRAWN_MS = 10_000;
/**
 * Delivery: how long an Enter waits for UserPromptSubmit before the input box is looked at again. Claude Code runs
 * the UserPromptSubmit hook before it clears the box, so on a loaded machine a prompt that was taken still shows
 * for a while: pressing again sooner only adds retries (measured with 10 real CLIs started at once).
 */
export const PROMPT_RETRY_AFTER_MS = 2500;
/** Delivery: how often the input box is read while waiting for a paste to be drawn (each read is a tmux call). */
export const PASTE_POLL_MS = 20;
/**
 * Delivery: the first PASTE_POLL_FAST_FOR_MS of that wait read every PASTE_POLL_FAST_MS: an idle 2.1.330 draws a short
 * paste within 20 ms (measured: the second read, 20 ms after the paste, saw it in 6 of 6 follow-up turns).
 */
export const PASTE_POLL_FAST_MS = 5;
export const PASTE_POLL_FAST_FOR_MS = 100;
/** Delivery: once the text has left the box, how long the UserPromptSubmit hook may take under load. */
export const PROMPT_CONFIRM_MS = 30_000;
/** Delivery: Enter presses before giving up. */
export const PROMPT_ATTEMPTS = 3;
/** Permission: how long to wait for the dialog to be drawn after PermissionRequest (2.1.330 fires it earlier). */
export const DIALOG_DRAWN_MS = 5000;
/** Permission: keys are taken this long after the dialog first shows. */
export const DIALOG_KEYS_AFTER_MS = 350;
/** Permission: how long one answer waits for the dialog to go, times the attempt number. */
export const ANSWER_CONFIRM_MS = 1500;
/** Interrupt: wait this long at most for the busy frame before pressing Esc. */
export const BUSY_FRAME_MS = 2000;
/** Interrupt: a stopped screen is believed once it has held this long. */
export const STOPPED_STABLE_MS = 250;
/** Interrupt: Esc is pressed again after this long without effect (3 presses at most). */
export const ESC_AGAIN_MS = 1500;
/** Deny: how long to look for the stopped turn after "No" (it fires no hook). */
export const DENY_STOP_MS = 3000;
/** Delivery: a paste and its Enter are separate keystrokes; a paste gets this long to land, plus 5 ms per 1,000 characters. */
export const PASTE_LAND_MS = 40;

/**
 * The timings a terminal driver may be given instead of the defaults above: the fast test tier drives a scripted
 * screen that needs no patience. Production always uses the measured values.
 */
export interface DriverTiming {
  promptRetryAfterMs: number;
  inputHandlerMs: number;
  pasteLandMs: number;
}
export const DRIVER_TIMING: DriverTiming = {
  promptRetryAfterMs: PROMPT_RETRY_AFTER_MS,
  inputHandlerMs: INPUT_HANDLER_MS,
  pasteLandMs: PASTE_LAND_MS,
};

export type BlockingScreen = "trust" | "api_key" | "login" | "bypass_warning" | "mcp_server";

const PATTERNS: Array<[BlockingScreen, RegExp]> = [
  ["trust", /trust (the files in )?this folder|Do you trust the files/i],
  ["api_key", /Do you want to use this API key/i],
  ["login", /Select login method|Choose the text style|Log in to Claude|Login with your Claude account/i],
  ["bypass_warning", /Bypass Permissions mode/i],
  // A project .mcp.json server nobody approved yet: asked before SessionStart (2.1.330, 2.1.331).
  ["mcp_server", /New MCP servers? found in (this project|\.mcp\.json)/],
];

export function detectBlockingScreen(screen: string): BlockingScreen | undefined {
  for (const [name, re] of PATTERNS) if (re.test(screen)) return name;
  return undefined;
}

export const BLOCKING_HELP: Record<BlockingScreen, string> = {
  trust:
    "Claude Code asks whether to trust this folder. Pass trust_workspace: true to accept it, or run `claude` once in that folder yourself.",
  api_key:
    "Claude Code asks whether to use the API key in ANTHROPIC_API_KEY (its default answer is No). Run `claude` once " +
    "in a terminal and approve the key, or unset ANTHROPIC_API_KEY to use your login.",
  login: "Claude Code is not logged in. Run `claude` once in a terminal and log in (or set ANTHROPIC_API_KEY).",
  mcp_server:
    "Claude Code asks whether to use the MCP servers of the folder's .mcp.json. Approve them in Claude Code's settings " +
    '(enabledMcpjsonServers: ["<name>"], or enableAllProjectMcpServers: true; disabledMcpjsonServers to refuse), ' +
    "or run `claude` once in that folder and answer.",
  bypass_warning:
    "Claude Code asks to confirm bypass-permissions mode. Set skipDangerousModePermissionPrompt in ~/.claude/settings.json, " +
    "or start without bypassPermissions.",
};

/** The turn was interrupted (Esc): Claude shows this and fires no Stop hook. */
export function showsInterrupted(screen: string): boolean {
  const lines = screen.trimEnd().split("\n");
  const tail = lines.slice(-30).join("\n");
  return /Interrupted · What should Claude do instead\?/.test(tail) && !/esc to interrupt/i.test(tail);
}

/**
 * The last turn on screen ended with "Interrupted" and the input box is back, however far above the box the line is
 * (2.1.330 draws the conversation at the top and the box at the bottom of a tall pane, with blank rows between):
 * no prompt line after the "Interrupted" line, no busy indicator, an input box.
 */
export function showsInterruptedTurn(screen: string): boolean {
  if (showsBusy(screen) || inputText(screen) === undefined) return false;
  const lines = screen.split("\n");
  let rule = -1;
  let seen = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/^─{20,}\s*$/.test(lines[i]!) && ++seen === 2) {
      rule = i;
      break;
    }
  }
  for (let i = rule - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (/Interrupted · What should Claude do instead\?/.test(l)) return true;
    if (/^❯\s/.test(l)) return false;
  }
  return false;
}

/**
 * Up/Down presses that move a menu's cursor (`❯`) onto the option matching `target`, or undefined when
 * either is not on screen. 2.1.197 numbers the trust screen's options with "Yes" first; 2.1.330 does not
 * number them and puts "No, exit" first, so Enter alone would exit.
 */
export function menuMoves(screen: string, target: RegExp): number | undefined {
  const lines = screen.split("\n");
  let cursor = -1;
  let want = -1;
  lines.forEach((l, i) => {
    if (/^\s+❯\s/.test(l)) cursor = i;
    if (target.test(l)) want = i;
  });
  if (cursor < 0 || want < 0 || Math.abs(want - cursor) > 6) return undefined;
  return want - cursor;
}

/**
 * The digit of a permission dialog's option for a decision, read from the dialog: 2.1.197 shows
 * 1 Yes / 2 Yes, and always allow / 3 No; 2.1.330 adds "3. Yes, and switch to auto mode" and moves No to 4.
 */
export function permissionDigit(screen: string, decision: "allow" | "allow_always" | "deny"): string | undefined {
  const at = screen.lastIndexOf("Do you want to proceed?");
  if (at < 0) return undefined;
  const options = new Map<string, string>();
  for (const m of screen.slice(at).matchAll(/^\s*(?:❯\s*)?([1-9])\.\s+(.+)$/gm)) options.set(m[1]!, m[2]!.trim());
  const pick = (re: RegExp) => [...options].find(([, label]) => re.test(label))?.[0];
  if (decision === "allow") return pick(/^Yes$/);
  if (decision === "allow_always") return pick(/^Yes, and (always allow|don't ask again)/i);
  return pick(/^No\b/);
}

/**
 * The turn is over without a Stop hook: either the "Interrupted" line, or (Esc before any reply arrived)
 * the prompt put back into the input box, with no spinner, no busy footer and no dialog.
 */
export function showsStoppedTurn(screen: string): boolean {
  if (showsInterrupted(screen)) return true;
  const tail = screen.trimEnd().split("\n").slice(-30).join("\n");
  return !showsBusy(screen) && !/Do you want to proceed\?/.test(tail) && inputText(screen) !== undefined;
}

/**
 * A turn is running on screen. While busy, 2.1.330 drops "esc to interrupt" from the footer as soon as the
 * input box holds text; the spinner line ("✢ Doing…", "✶ Waddling… (1s · ↓ 4 tokens)") stays.
 */
export function showsBusy(screen: string): boolean {
  const tail = screen.trimEnd().split("\n").slice(-30).join("\n");
  return /^\s*[·✢✳✶✻✽*]\s+\S+…/m.test(tail) || /esc to interrupt/i.test(tail);
}

/**
 * The permission mode an idle screen's footer (below the input box) shows: Claude Code's indicators "manual mode on"
 * (2.1.330+, the default mode), "plan mode on", "accept edits on", "bypass permissions on", "don't ask on" and
 * "auto mode on" (its mode table, 2.1.330–2.1.332). No indicator — the default mode of older versions, which show
 * "? for shortcuts" there — is "default".
 */
export function footerPermissionMode(
  screen: string,
): "default" | "plan" | "acceptEdits" | "bypassPermissions" | "dontAsk" | "auto" {
  const lines = screen.trimEnd().split("\n");
  let last = -1;
  lines.forEach((l, i) => {
    if (/^─{20,}\s*$/.test(l)) last = i;
  });
  const footer = lines.slice(last + 1).join("\n");
  const m = /(manual mode|plan mode|accept edits|bypass permissions|don't ask|auto mode) on\b/i.exec(footer);
  const modes = {
    "manual mode": "default",
    "plan mode": "plan",
    "accept edits": "acceptEdits",
    "bypass permissions": "bypassPermissions",
    "don't ask": "dontAsk",
    "auto mode": "auto",
  } as const;
  return m ? modes[m[1]!.toLowerCase() as keyof typeof modes] : "default";
}

/**
 * The text in the input box (between the last two full-width rules), "" when empty, undefined when no
 * input box is on screen. After Esc before any reply, Claude Code puts the prompt back here.
 */
export function inputText(screen: string): string | undefined {
  const lines = screen.split("\n");
  const rules: number[] = [];
  lines.forEach((l, i) => {
    if (/^─{20,}\s*$/.test(l)) rules.push(i);
  });
  if (rules.length < 2) return undefined;
  const [a, b] = [rules.at(-2)!, rules.at(-1)!];
  const box = lines.slice(a + 1, b);
  if (!box[0] || !/^❯(\s|$)/.test(box[0])) return undefined;
  return box
    .map((l, i) => (i === 0 ? l.replace(/^❯\s?/, "") : l.replace(/^ {2}/, "")))
    .join("\n")
    .trim();
}

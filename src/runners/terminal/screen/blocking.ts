/**
 * Screens that hold a turn while no hook fires (issue 20): Claude Code asks something on screen and waits. Each known
 * screen has a pattern and its choices, read from the screen into a table of server-made keys (Up/Down/Enter for a
 * menu, the footer's named keys for a key-prompt); a caller's answer picks a row of that table and never becomes keys
 * itself. Samples of each screen are in tests/fixtures/screens (taken from the real CLI where it can show them
 * offline; written from the binary's strings where not, and named so).
 */
import type { Key } from "../../host.js";
import type { BlockedKind } from "../../../core/status.js";
import { showsBusy } from "./screens.js";
import { briefText } from "../../../util/terminal-text.js";

/**
 * A permission dialog on screen while the turn is busy, with no hook for this long, is one whose PermissionRequest hook
 * does not fire (auto mode's own approval dialog, 2.1.330/2.1.331): the hook of a dialog comes ~50 ms after it opens.
 */
export const HOOKLESS_DIALOG_MS = 2000;
/** A screen the server does not know is reported after this long without a hook (CLAUDE_SESSIONS_UNKNOWN_SCREEN_MS). */
export const UNKNOWN_SCREEN_MS = 10_000;
/** How long an answer waits for its screen to go, per attempt. */
export const PROMPT_ANSWER_MS = 3000;
/** Text kept of a blocking screen (state.json, results, notifications). */
const TEXT_MAX = 1200;

export interface ScreenChoice {
  label: string;
  /** Server-made keys that pick this choice from the screen as it was read. */
  keys: Key[];
}

export interface ScreenPrompt {
  kind: BlockedKind;
  /** The screen's question and what it says, brief. */
  text: string;
  choices: ScreenChoice[];
}

interface Known {
  kind: BlockedKind;
  /** The screen's title or question: where its text starts. */
  title: RegExp;
  /** Reported only once the turn was quiet this long (a permission dialog's hook may be on its way). */
  afterQuietMs?: number;
}

/**
 * In order: the first whose title is a line of the bottom of the screen wins. Titles match whole lines (trimmed): the
 * same words inside a message ("Auto mode can't check actions in this session, so this one needs your approval"
 * above a permission dialog) are not the screen.
 */
const KNOWN: Known[] = [
  { kind: "auto_mode_unavailable", title: /^Auto mode can't check actions in this session$/ },
  {
    kind: "plan_approval",
    title:
      /^(Exit plan mode\?|Enter plan mode\?|How should the plan be implemented\?|Here is Claude's plan:|.*ready to execute\. Would you like to proceed\?)$/,
  },
  // AskUserQuestion, once its PermissionRequest was allowed: "☐ <header>", the question, numbered options.
  { kind: "question", title: /^[☐☒]\s+\S/ },
  { kind: "mcp_server", title: /^New MCP servers? found in (this project|\.mcp\.json)\b/ },
  { kind: "trust", title: /^(Do you trust the files in this folder\?|Accessing workspace:)$/ },
  { kind: "api_key", title: /^Do you want to use this API key\?$/ },
  { kind: "usage_limit", title: /^What do you want to do\?$/ },
  { kind: "bypass_warning", title: /^(WARNING: Claude Code running in Bypass Permissions mode|Switch to bypass permissions\?)$/ },
  {
    kind: "permission_dialog",
    title:
      /^(Do you want to proceed\?|Do you want to allow (this connection|Claude to fetch this content)\?|Do you want to (make this edit to|create) .+\?)$/,
    afterQuietMs: HOOKLESS_DIALOG_MS,
  },
];

/** The bottom of the screen: what is drawn now (scrollback above can hold old dialogs' text). */
function bottom(screen: string): string[] {
  return screen.replace(/\s+$/, "").split("\n").slice(-45);
}

/**
 * The choices of a menu drawn with a `❯` cursor: the rows around the cursor that start at its text's column.
 * "1. Yes" reads as "Yes". Keys move the cursor from where it is, then Enter.
 */
export function menuChoices(lines: readonly string[]): ScreenChoice[] {
  const numbered = numberedChoices(lines);
  if (numbered.length) return numbered;
  let cur = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    // A menu's cursor is indented; the input box's `❯` sits in column 0.
    if (/^\s+❯\s+\S/.test(lines[i]!)) {
      cur = i;
      break;
    }
  }
  if (cur < 0) return [];
  const col = /^\s+❯\s+/.exec(lines[cur]!)![0].length;
  const isRow = (l: string) => l.length > col && /^\s*$/.test(l.slice(0, col).replace("❯", " ")) && /\S/.test(l[col]!);
  let a = cur;
  while (a > 0 && isRow(lines[a - 1]!)) a--;
  let z = cur;
  while (z < lines.length - 1 && isRow(lines[z + 1]!)) z++;
  const rows = lines.slice(a, z + 1).map((l) =>
    l
      .slice(col)
      .trim()
      .replace(/^[1-9]\.\s+/, ""),
  );
  if (rows.length < 2 || rows.length > 9) return [];
  const at = cur - a;
  return rows.map((label, i) => {
    const d = i - at;
    const moves: Key[] = Array.from({ length: Math.abs(d) }, () => (d > 0 ? "Down" : "Up"));
    return { label, keys: [...moves, "Enter"] };
  });
}

/**
 * A numbered menu ("❯ 1. Red", "  2. Blue"), whose rows may have description lines or a rule between them
 * (AskUserQuestion): the rows 1, 2, 3… in order, wherever their column. The cursor row may sit in column 0.
 */
function numberedChoices(lines: readonly string[]): ScreenChoice[] {
  const rows: Array<{ label: string; cursor: boolean }> = [];
  for (const l of lines) {
    const m = /^\s*(❯\s*)?([1-9])\.\s+(\S.*)$/.exec(l);
    if (!m) continue;
    const n = Number(m[2]);
    if (n === 1) rows.length = 0;
    if (n !== rows.length + 1) continue;
    rows.push({ label: m[3]!.trim(), cursor: Boolean(m[1]) });
  }
  const at = rows.findIndex((r) => r.cursor);
  if (rows.length < 2 || at < 0) return [];
  return rows.map((r, i) => {
    const d = i - at;
    const moves: Key[] = Array.from({ length: Math.abs(d) }, () => (d > 0 ? "Down" : "Up"));
    return { label: r.label, keys: [...moves, "Enter"] };
  });
}

const FOOTER_KEYS: Array<[RegExp, Key]> = [
  [/^Enter$/i, "Enter"],
  [/^shift\+Tab$/i, "BTab"],
  [/^Esc$/i, "Escape"],
  [/^Tab$/i, "Tab"],
];

/**
 * The choices of a key prompt: a footer such as "Enter to stay in auto mode · shift+Tab to leave … · Esc to cancel".
 * Only the keys named in FOOTER_KEYS are offered.
 */
export function footerChoices(lines: readonly string[]): ScreenChoice[] {
  for (let i = lines.length - 1; i >= 0 && i >= lines.length - 4; i--) {
    const parts = lines[i]!.trim().split(/\s+·\s+/);
    const out: ScreenChoice[] = [];
    for (const p of parts) {
      const m = /^(\S+)\s+to\s+(.+)$/.exec(p);
      const key = m && FOOTER_KEYS.find(([re]) => re.test(m[1]!))?.[1];
      if (m && key) out.push({ label: m[2]!.trim(), keys: [key] });
    }
    if (out.length >= 2) return out;
  }
  return [];
}

/**
 * A known blocking screen at the bottom of `screen`, with its text and choices; undefined when none shows. `quietMs`:
 * how long the turn has been quiet (screens that may still get their hook are left out until then; default: any).
 */
export function classifyScreen(screen: string, opts: { quietMs?: number } = {}): ScreenPrompt | undefined {
  const lines = bottom(screen);
  for (const k of KNOWN) {
    if ((k.afterQuietMs ?? 0) > (opts.quietMs ?? Infinity)) continue;
    let at = -1;
    lines.forEach((l, i) => {
      if (at < 0 && k.title.test(l.trim())) at = i;
    });
    if (at < 0) continue;
    const region = lines.slice(at);
    const menu = menuChoices(region);
    const choices = menu.length ? menu : footerChoices(region);
    // A title without a way to answer it on screen is old text (the answered dialog's echo), not a prompt.
    if (!choices.length) continue;
    return { kind: k.kind, text: briefText(region.join("\n"), TEXT_MAX, 16), choices };
  }
  return undefined;
}

/**
 * A screen that is neither a turn at work nor the input box nor a known prompt: after a quiet while it is reported
 * as `unknown`, with the choices a menu or footer on it offers (possibly none).
 */
export function unknownScreen(screen: string, inputShown: boolean): ScreenPrompt | undefined {
  if (!screen.trim() || inputShown || showsBusy(screen)) return undefined;
  const lines = bottom(screen);
  const menu = menuChoices(lines);
  return { kind: "unknown", text: briefText(lines.join("\n"), 600, 10), choices: menu.length ? menu : footerChoices(lines) };
}

/**
 * The row of `choices` a caller's `choice` names: a 1-based number, or a label (case and spacing ignored). Undefined
 * when none does.
 */
export function pickChoice(choices: readonly ScreenChoice[], choice: string | number): ScreenChoice | undefined {
  if (typeof choice === "number") return Number.isInteger(choice) && choice >= 1 ? choices[choice - 1] : undefined;
  const norm = (t: string) => t.replace(/\s+/g, " ").trim().toLowerCase();
  const want = norm(choice);
  if (/^[1-9]$/.test(want)) return choices[Number(want) - 1];
  return choices.find((c) => norm(c.label) === want);
}

/**
 * Screen text is a fallback signal only (hooks are the source of truth). These patterns recognise
 * the screens Claude Code shows instead of its prompt on a first run, and the end of an interrupted turn.
 */
export type BlockingScreen = "trust" | "api_key" | "login" | "bypass_warning";

const PATTERNS: Array<[BlockingScreen, RegExp]> = [
  ["trust", /trust (the files in )?this folder|Do you trust the files/i],
  ["api_key", /Do you want to use this API key/i],
  ["login", /Select login method|Choose the text style|Log in to Claude|Login with your Claude account/i],
  ["bypass_warning", /Bypass Permissions mode/i],
];

export function detectBlockingScreen(screen: string): BlockingScreen | undefined {
  for (const [name, re] of PATTERNS) if (re.test(screen)) return name;
  return undefined;
}

export const BLOCKING_HELP: Record<BlockingScreen, string> = {
  trust: "Claude Code asks whether to trust this folder. Pass trust_workspace: true to accept it, or run `claude` once in that folder yourself.",
  api_key:
    "Claude Code asks whether to use the API key in ANTHROPIC_API_KEY (its default answer is No). Run `claude` once in a terminal and approve the key, or unset ANTHROPIC_API_KEY to use your login.",
  login: "Claude Code is not logged in. Run `claude` once in a terminal and log in (or set ANTHROPIC_API_KEY).",
  bypass_warning:
    "Claude Code asks to confirm bypass-permissions mode. Set skipDangerousModePermissionPrompt in ~/.claude/settings.json, or start without bypassPermissions.",
};

/** The turn was interrupted (Esc): Claude shows this and fires no Stop hook. */
export function showsInterrupted(screen: string): boolean {
  const lines = screen.trimEnd().split("\n");
  const tail = lines.slice(-30).join("\n");
  return /Interrupted · What should Claude do instead\?/.test(tail) && !/esc to interrupt/i.test(tail);
}

/** The idle input prompt is on screen and no turn is running. */
export function showsIdlePrompt(screen: string): boolean {
  return /^❯ /m.test(screen) && !/esc to interrupt/i.test(screen) && !/Do you want to proceed\?/.test(screen);
}

/** The last non-empty lines of a screen, for error messages. */
export function lastLines(screen: string, n = 15): string {
  return screen
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l, i, a) => l !== "" || (i > 0 && a[i - 1] !== ""))
    .slice(-n)
    .join("\n")
    .trim();
}

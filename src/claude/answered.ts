/**
 * Whether a prompt that hit a usage limit was answered after all (issue 33): its transcript line (by `promptId`, or
 * the last user line with that text) followed by an assistant line that is not the CLI's own API error message.
 * A wake resends the prompt only when this says no, so a prompt is never answered twice.
 */
import { readFile } from "node:fs/promises";

export async function promptAnswered(path: string, promptId: string | undefined, prompt: string | undefined): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return false;
  }
  return answeredIn(text, promptId, prompt);
}

export function answeredIn(text: string, promptId: string | undefined, prompt: string | undefined): boolean {
  const lines: Array<Record<string, unknown>> = [];
  for (const l of text.split("\n")) {
    if (!l.startsWith("{")) continue;
    try {
      const v = JSON.parse(l) as unknown;
      if (v && typeof v === "object") lines.push(v as Record<string, unknown>);
    } catch {
      /* a torn line */
    }
  }
  let at = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (l.type !== "user" || l.isSidechain === true) continue;
    if ((promptId !== undefined && l.promptId === promptId) || (prompt !== undefined && userText(l) === prompt)) {
      at = i;
      break;
    }
  }
  if (at < 0) return false;
  for (let i = at + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (
      l.type === "assistant" &&
      l.isSidechain !== true &&
      l.isApiErrorMessage !== true &&
      (l.message as { model?: string } | undefined)?.model !== "<synthetic>"
    )
      return true;
  }
  return false;
}

function userText(l: Record<string, unknown>): string | undefined {
  const c = (l.message as { content?: unknown } | undefined)?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    const t = c
      .filter((b) => b && typeof b === "object" && (b as { type?: string }).type === "text")
      .map((b) => String((b as { text?: string }).text ?? ""));
    return t.length ? t[t.length - 1] : undefined;
  }
  return undefined;
}

/**
 * Reading Claude's own transcript (<config>/projects/<cwd mangled>/<id>.jsonl, where <config> is
 * CLAUDE_CONFIG_DIR or ~/.claude) from a byte
 * cursor. The format is internal to Claude Code and changes between versions: parse defensively.
 */
import { join } from "node:path";
import { readFrom } from "../util/files.js";

export function transcriptPath(configDir: string, cwd: string, claudeSessionId: string): string {
  return join(configDir, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"), `${claudeSessionId}.jsonl`);
}

export interface TranscriptItem {
  role: "user" | "assistant";
  text: string;
  timestamp?: string;
  uuid?: string;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: unknown) => {
      if (b && typeof b === "object") {
        const o = b as { type?: string; text?: string; name?: string; input?: unknown };
        if (o.type === "text" && typeof o.text === "string") return o.text;
        if (o.type === "tool_use") return `[tool_use ${o.name ?? ""} ${JSON.stringify(o.input ?? {})}]`;
        if (o.type === "tool_result") return "[tool_result]";
      }
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

export function parseTranscriptLine(line: string): TranscriptItem | undefined {
  try {
    const o = JSON.parse(line) as { type?: string; message?: { role?: string; content?: unknown }; timestamp?: string; uuid?: string; isMeta?: boolean };
    if ((o.type !== "user" && o.type !== "assistant") || !o.message || o.isMeta) return undefined;
    const text = textOf(o.message.content);
    if (!text) return undefined;
    const item: TranscriptItem = { role: o.type, text };
    if (o.timestamp) item.timestamp = o.timestamp;
    if (o.uuid) item.uuid = o.uuid;
    return item;
  } catch {
    return undefined;
  }
}

/** Items after `cursor` (a byte offset); the new cursor stops after the last complete line. */
export async function readTranscript(path: string, cursor: number): Promise<{ items: TranscriptItem[]; cursor: number }> {
  const { text, end } = await readFrom(path, cursor, { upTo: "line" });
  const items: TranscriptItem[] = [];
  for (const line of text.split("\n")) {
    const it = line ? parseTranscriptLine(line) : undefined;
    if (it) items.push(it);
  }
  return { items, cursor: end };
}

/**
 * Reading Claude's own transcript (<config>/projects/<cwd mangled>/<id>.jsonl, where <config> is
 * CLAUDE_CONFIG_DIR or ~/.claude) from a byte
 * cursor. The line format is parsed in transcript-line.ts.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readFrom } from "../util/fs/files.js";
import { parseTranscriptLine, type Block } from "./transcript-line.js";

export function transcriptPath(configDir: string, cwd: string, claudeSessionId: string): string {
  return join(configDir, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"), `${claudeSessionId}.jsonl`);
}

/** Whether the transcript at `path` has a conversation entry (a user or assistant line) with this uuid. */
export async function hasEntry(path: string, uuid: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return false;
  }
  for (const line of text.split("\n")) {
    if (!line.includes(uuid)) continue;
    try {
      const l = JSON.parse(line) as { uuid?: unknown; type?: unknown };
      if (l.uuid === uuid && (l.type === "user" || l.type === "assistant")) return true;
    } catch {
      // a line being written
    }
  }
  return false;
}

export interface TranscriptItem {
  role: "user" | "assistant";
  text: string;
  timestamp?: string;
  uuid?: string;
}

function textOf(content: string | Block[] | undefined): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content
    .map((b) => {
      if (b.type === "text") return b.text;
      if (b.type === "tool_use") return `[tool_use ${b.name ?? ""} ${JSON.stringify(b.input ?? {})}]`;
      if (b.type === "tool_result") return "[tool_result]";
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

/** A line → the conversation item it shows: a user or assistant message with text, not Claude Code's meta lines. */
export function itemOf(line: string): TranscriptItem | undefined {
  const l = parseTranscriptLine(line);
  if ((l?.kind !== "user" && l?.kind !== "assistant") || l.meta) return undefined;
  const text = textOf(l.content);
  if (!text) return undefined;
  const item: TranscriptItem = { role: l.kind, text };
  if (l.timestamp) item.timestamp = l.timestamp;
  if (l.uuid) item.uuid = l.uuid;
  return item;
}

/** Items after `cursor` (a byte offset); the new cursor stops after the last complete line. */
export async function readTranscript(path: string, cursor: number): Promise<{ items: TranscriptItem[]; cursor: number }> {
  const { text, end } = await readFrom(path, cursor, { upTo: "line" });
  const items: TranscriptItem[] = [];
  for (const line of text.split("\n")) {
    const it = line ? itemOf(line) : undefined;
    if (it) items.push(it);
  }
  return { items, cursor: end };
}

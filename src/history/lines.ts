/**
 * One transcript line → what the index keeps of it. The line format is parsed (defensively) in
 * claude/transcript-line.ts; this keeps what the index needs.
 */
import { messageUsageOf, parseTranscriptLine, type Block, type MessageUsage } from "../claude/transcript-line.js";

export interface ToolCall {
  name: string;
  /** The call's main argument (command, path, pattern, …), shortened. */
  input: string;
}

export interface LineItem {
  role: "user" | "assistant";
  text: string;
  tools: ToolCall[];
  uuid?: string;
  msgId?: string;
}

export interface ParsedLine {
  at?: number;
  cwd?: string;
  sidechain: boolean;
  usage?: MessageUsage;
  /** A user prompt or an assistant reply shown in the conversation (not tool results, not sub-agents). */
  item?: LineItem;
  /** The item is a prompt a person (or the server) typed: counts as a turn and can title the conversation. */
  prompt: boolean;
  summary?: { text: string; leafUuid: string };
  customTitle?: string;
}

/** Items longer than this are cut (the transcript keeps the whole text). */
export const MAX_ITEM_CHARS = 100_000;
const TOOL_INPUT_CHARS = 160;

function rec(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function shorten(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function toolInput(input: unknown): string {
  const o = rec(input);
  if (!o) return "";
  for (const k of ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "skill"]) {
    const v = str(o[k]);
    if (v) return shorten(v, TOOL_INPUT_CHARS);
  }
  return shorten(JSON.stringify(o), TOOL_INPUT_CHARS);
}

interface Blocks {
  text: string;
  tools: ToolCall[];
  toolResult: boolean;
}

function blocksOf(content: string | Block[] | undefined): Blocks {
  if (typeof content === "string") return { text: content, tools: [], toolResult: false };
  const out: Blocks = { text: "", tools: [], toolResult: false };
  if (!content) return out;
  const texts: string[] = [];
  for (const b of content) {
    if (b.type === "text") texts.push(b.text);
    else if (b.type === "tool_use") out.tools.push({ name: b.name || "tool", input: toolInput(b.input) });
    else if (b.type === "tool_result") out.toolResult = true;
  }
  out.text = texts.join("\n");
  return out;
}

export function parseLine(line: string): ParsedLine | undefined {
  const l = parseTranscriptLine(line);
  if (!l) return undefined;
  const out: ParsedLine = { sidechain: l.sidechain, prompt: false };
  if (l.timestamp) {
    const ms = Date.parse(l.timestamp);
    if (Number.isFinite(ms)) out.at = ms;
  }
  if (l.cwd) out.cwd = l.cwd;
  if (l.kind === "summary") {
    if (l.summary && l.leafUuid) out.summary = { text: shorten(l.summary, 300), leafUuid: l.leafUuid };
    return out;
  }
  if (l.kind === "custom-title") {
    if (l.title) out.customTitle = shorten(l.title, 300);
    return out;
  }
  if (l.kind !== "user" && l.kind !== "assistant") return out;
  const mu = messageUsageOf(l);
  if (mu) out.usage = mu;
  if (l.sidechain || l.meta || l.compactSummary) return out;
  const b = blocksOf(l.content);
  if (b.toolResult && l.kind === "user") return out;
  const text = b.text.length > MAX_ITEM_CHARS ? b.text.slice(0, MAX_ITEM_CHARS) : b.text;
  if (!text.trim() && b.tools.length === 0) return out;
  const item: LineItem = { role: l.kind, text, tools: b.tools };
  if (l.uuid) item.uuid = l.uuid;
  if (l.messageId) item.msgId = l.messageId;
  out.item = item;
  out.prompt = l.kind === "user";
  return out;
}

/** A prompt good enough to title a conversation (not a slash command's plumbing or a caveat notice). */
export function titleFromPrompt(text: string): string | undefined {
  const cmd = /<command-name>([^<]+)<\/command-name>/.exec(text);
  if (cmd?.[1]) return undefined;
  if (/^\s*(<local-command|<bash-|Caveat:)/.test(text)) return undefined;
  const t = shorten(text.replace(/<[^>]{1,60}>/g, " "), 200);
  return t || undefined;
}

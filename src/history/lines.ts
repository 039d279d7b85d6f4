/**
 * One transcript line → what the index keeps of it. Claude Code's format is internal and changes
 * between versions: every field is optional, anything unexpected is ignored, nothing throws.
 */
import { messageUsageOf, type MessageUsage } from "../claude/usage.js";

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

function blocksOf(content: unknown): Blocks {
  if (typeof content === "string") return { text: content, tools: [], toolResult: false };
  const out: Blocks = { text: "", tools: [], toolResult: false };
  if (!Array.isArray(content)) return out;
  const texts: string[] = [];
  for (const b of content) {
    const o = rec(b);
    if (!o) continue;
    if (o.type === "text" && typeof o.text === "string") texts.push(o.text);
    else if (o.type === "tool_use") out.tools.push({ name: str(o.name) ?? "tool", input: toolInput(o.input) });
    else if (o.type === "tool_result") out.toolResult = true;
  }
  out.text = texts.join("\n");
  return out;
}

export function parseLine(line: string): ParsedLine | undefined {
  let o: Record<string, unknown> | undefined;
  try {
    o = rec(JSON.parse(line));
  } catch {
    return undefined;
  }
  if (!o) return undefined;
  const out: ParsedLine = { sidechain: o.isSidechain === true, prompt: false };
  const ts = str(o.timestamp);
  if (ts) {
    const ms = Date.parse(ts);
    if (Number.isFinite(ms)) out.at = ms;
  }
  const cwd = str(o.cwd);
  if (cwd) out.cwd = cwd;
  const type = o.type;
  if (type === "summary") {
    const text = str(o.summary);
    const leafUuid = str(o.leafUuid);
    if (text && leafUuid) out.summary = { text: shorten(text, 300), leafUuid };
    return out;
  }
  if (type === "custom-title") {
    const t = str(o.customTitle) ?? str(o.title);
    if (t) out.customTitle = shorten(t, 300);
    return out;
  }
  if (type !== "user" && type !== "assistant") return out;
  const msg = rec(o.message);
  if (!msg) return out;
  if (type === "assistant") {
    const mu = messageUsageOf(o);
    if (mu) out.usage = mu;
  }
  if (out.sidechain || o.isMeta === true || o.isCompactSummary === true) return out;
  const b = blocksOf(msg.content);
  if (b.toolResult && type === "user") return out;
  const text = b.text.length > MAX_ITEM_CHARS ? b.text.slice(0, MAX_ITEM_CHARS) : b.text;
  if (!text.trim() && b.tools.length === 0) return out;
  const item: LineItem = { role: type, text, tools: b.tools };
  const uuid = str(o.uuid);
  if (uuid) item.uuid = uuid;
  const msgId = str(msg.id);
  if (msgId) item.msgId = msgId;
  out.item = item;
  out.prompt = type === "user";
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

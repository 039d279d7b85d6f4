/**
 * One line of Claude's transcript (<config>/projects/<mangled cwd>/<id>.jsonl and its sub-agent files) → a typed
 * value. The format is internal to Claude Code and changes between versions: every field is optional, anything
 * unexpected is ignored, nothing throws. This is the one module that knows the line format; the readers
 * (conversation output, turn usage, session totals, the history index) take what they need from the result.
 */

/** Token counts of one API message, as Claude's transcript reports them. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** All cache writes: 5-minute plus 1-hour. */
  cache_creation_input_tokens: number;
  cache_creation_5m_input_tokens: number;
  cache_creation_1h_input_tokens: number;
  cache_read_input_tokens: number;
}

/** One API message's usage, as read from a transcript line. */
export interface MessageUsage {
  message_id: string;
  model: string;
  usage: Usage;
  sidechain: boolean;
  timestamp?: string;
}

/** A content block of a message. Blocks of other types (thinking, images, …) are `other`. */
export type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; name?: string; input?: unknown }
  | { type: "tool_result" }
  | { type: "other" };

/** What every line may carry. */
interface Common {
  /** A sub-agent's line (`isSidechain`). */
  sidechain: boolean;
  /** Claude Code's own plumbing shown as a user message (`isMeta`). */
  meta: boolean;
  /** The summary written when a conversation is compacted (`isCompactSummary`). */
  compactSummary: boolean;
  timestamp?: string;
  uuid?: string;
  /** The line before this one in its conversation (not always the line before it in the file). */
  parentUuid?: string;
  /** Newer versions: the id of the prompt a line belongs to. */
  promptId?: string;
  cwd?: string;
}

interface Message extends Common {
  messageId?: string;
  /** A string (a typed prompt) or the message's blocks; undefined when neither. */
  content?: string | Block[];
}

export interface UserLine extends Message {
  kind: "user";
}

export interface AssistantLine extends Message {
  kind: "assistant";
  model?: string;
  /** Present when the line carries a usage object. */
  usage?: Usage;
}

export interface SummaryLine extends Common {
  kind: "summary";
  summary?: string;
  leafUuid?: string;
}

export interface TitleLine extends Common {
  kind: "custom-title";
  title?: string;
}

export interface SystemLine extends Common {
  kind: "system";
  subtype?: string;
}

/** Any other line (attachments, modes, snapshots, …), and a user or assistant line without a message object. */
export interface OtherLine extends Common {
  kind: "other";
  type?: string;
}

export type TranscriptLine = UserLine | AssistantLine | SummaryLine | TitleLine | SystemLine | OtherLine;

function rec(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/**
 * The API's usage object → Usage. Cache writes are split by TTL when `cache_creation` says so;
 * older lines only have the total, which is the 5-minute default.
 */
export function parseUsage(raw: unknown): Usage {
  const u = rec(raw) ?? {};
  const total = count(u.cache_creation_input_tokens);
  const split = rec(u.cache_creation);
  let m5 = split ? count(split.ephemeral_5m_input_tokens) : 0;
  const h1 = split ? count(split.ephemeral_1h_input_tokens) : 0;
  if (m5 + h1 < total) m5 = total - h1;
  return {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    cache_creation_input_tokens: Math.max(total, m5 + h1),
    cache_creation_5m_input_tokens: m5,
    cache_creation_1h_input_tokens: h1,
    cache_read_input_tokens: count(u.cache_read_input_tokens),
  };
}

function blockOf(v: unknown): Block | undefined {
  const b = rec(v);
  if (!b) return undefined;
  if (b.type === "text") return typeof b.text === "string" ? { type: "text", text: b.text } : { type: "other" };
  if (b.type === "tool_use") {
    const out: Block = { type: "tool_use" };
    if (typeof b.name === "string") out.name = b.name;
    if (b.input !== undefined) out.input = b.input;
    return out;
  }
  if (b.type === "tool_result") return { type: "tool_result" };
  return { type: "other" };
}

function contentOf(v: unknown): string | Block[] | undefined {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) return undefined;
  const out: Block[] = [];
  for (const b of v) {
    const block = blockOf(b);
    if (block) out.push(block);
  }
  return out;
}

/** Sets the optional fields every line may carry (in place: one object per line). */
function common<T extends Common>(out: T, o: Record<string, unknown>): T {
  const timestamp = str(o.timestamp);
  if (timestamp) out.timestamp = timestamp;
  const uuid = str(o.uuid);
  if (uuid) out.uuid = uuid;
  const parentUuid = str(o.parentUuid);
  if (parentUuid) out.parentUuid = parentUuid;
  const promptId = str(o.promptId);
  if (promptId) out.promptId = promptId;
  const cwd = str(o.cwd);
  if (cwd) out.cwd = cwd;
  return out;
}

/** A parsed JSON value (one transcript line) → TranscriptLine; undefined when it is not an object. */
export function transcriptLineOf(value: unknown): TranscriptLine | undefined {
  const o = rec(value);
  if (!o) return undefined;
  const sidechain = o.isSidechain === true;
  const meta = o.isMeta === true;
  const compactSummary = o.isCompactSummary === true;
  const type = o.type;
  if (type === "summary") {
    const out = common<SummaryLine>({ kind: "summary", sidechain, meta, compactSummary }, o);
    const summary = str(o.summary);
    if (summary) out.summary = summary;
    const leafUuid = str(o.leafUuid);
    if (leafUuid) out.leafUuid = leafUuid;
    return out;
  }
  if (type === "custom-title") {
    const out = common<TitleLine>({ kind: "custom-title", sidechain, meta, compactSummary }, o);
    const title = str(o.customTitle) ?? str(o.title);
    if (title) out.title = title;
    return out;
  }
  if (type === "system") {
    const out = common<SystemLine>({ kind: "system", sidechain, meta, compactSummary }, o);
    const subtype = str(o.subtype);
    if (subtype) out.subtype = subtype;
    return out;
  }
  const msg = rec(o.message);
  if ((type !== "user" && type !== "assistant") || !msg) {
    const out = common<OtherLine>({ kind: "other", sidechain, meta, compactSummary }, o);
    if (typeof type === "string") out.type = type;
    return out;
  }
  // The hot path (most lines): one literal of a fixed shape per kind; absent fields are undefined.
  const timestamp = str(o.timestamp);
  const uuid = str(o.uuid);
  const parentUuid = str(o.parentUuid);
  const promptId = str(o.promptId);
  const cwd = str(o.cwd);
  const messageId = str(msg.id);
  const content = contentOf(msg.content);
  if (type === "user")
    return { kind: "user", sidechain, meta, compactSummary, timestamp, uuid, parentUuid, promptId, cwd, messageId, content };
  const usage = rec(msg.usage) ? parseUsage(msg.usage) : undefined;
  return {
    kind: "assistant",
    sidechain,
    meta,
    compactSummary,
    timestamp,
    uuid,
    parentUuid,
    promptId,
    cwd,
    messageId,
    content,
    model: str(msg.model),
    usage,
  };
}

/** One JSONL line → TranscriptLine; undefined for a line that is not a JSON object. */
export function parseTranscriptLine(line: string): TranscriptLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return transcriptLineOf(value);
}

/**
 * A cheap test before parsing: a line of this type has its name in quotes somewhere. False means it surely is not
 * one; true means parse it to know.
 */
export function mayBe(line: string, kind: "user" | "assistant"): boolean {
  return line.includes(kind === "user" ? '"user"' : '"assistant"');
}

/**
 * The billable usage an assistant line reports, or undefined for any other line. Lines without a message id or
 * with Claude Code's `<synthetic>` model (local error notices, no API call) carry none.
 */
export function messageUsageOf(l: TranscriptLine | undefined): MessageUsage | undefined {
  if (l?.kind !== "assistant" || !l.messageId || !l.usage) return undefined;
  const model = l.model ?? "unknown";
  if (model === "<synthetic>") return undefined;
  const out: MessageUsage = { message_id: l.messageId, model, usage: l.usage, sidechain: l.sidechain };
  if (l.timestamp) out.timestamp = l.timestamp;
  return out;
}

/** A prompt a person (or this server) typed: a user line that is not a tool result, a sub-agent's, meta or a summary. */
export function isPrompt(l: TranscriptLine): boolean {
  if (l.kind !== "user" || l.sidechain || l.meta || l.compactSummary) return false;
  if (typeof l.content === "string") return true;
  return Array.isArray(l.content) && !l.content.some((b) => b.type === "tool_result");
}

/** The line's message has a text block (an assistant's reply, not only tool calls). */
export function hasTextBlock(l: TranscriptLine): boolean {
  return (l.kind === "user" || l.kind === "assistant") && Array.isArray(l.content) && l.content.some((b) => b.type === "text");
}

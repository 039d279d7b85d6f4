/**
 * Token usage from Claude's transcript lines. Every assistant line carries `message.usage` and
 * `message.model`, but a streamed reply is written as several lines (one per content block) that share
 * one `message.id` and repeat its usage: summing lines overcounts. Each API message is counted once;
 * when its lines disagree (a later line with the final output count) the largest value of each field wins.
 */
import { readFrom } from "../util/files.js";

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** All cache writes: 5-minute plus 1-hour. */
  cache_creation_input_tokens: number;
  cache_creation_5m_input_tokens: number;
  cache_creation_1h_input_tokens: number;
  cache_read_input_tokens: number;
}

export type ModelUsage = Record<string, Usage>;

/** One API message's usage, as read from a transcript line. */
export interface MessageUsage {
  message_id: string;
  model: string;
  usage: Usage;
  sidechain: boolean;
  timestamp?: string;
}

export const USAGE_FIELDS = [
  "input_tokens",
  "output_tokens",
  "cache_creation_input_tokens",
  "cache_creation_5m_input_tokens",
  "cache_creation_1h_input_tokens",
  "cache_read_input_tokens",
] as const;

export function emptyUsage(): Usage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_creation_5m_input_tokens: 0,
    cache_creation_1h_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

export function addUsage(into: Usage, u: Usage): Usage {
  for (const f of USAGE_FIELDS) into[f] += u[f];
  return into;
}

export function maxUsage(a: Usage, b: Usage): Usage {
  const out = emptyUsage();
  for (const f of USAGE_FIELDS) out[f] = Math.max(a[f], b[f]);
  return out;
}

export function totalTokens(u: Usage): number {
  return u.input_tokens + u.output_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

function rec(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
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

/**
 * The usage an assistant line reports, or undefined for any other line. Lines without a message id or
 * with Claude Code's `<synthetic>` model (local error notices, no API call) carry no billable usage.
 */
export function messageUsageOf(line: unknown): MessageUsage | undefined {
  const o = rec(line);
  if (!o || o.type !== "assistant") return undefined;
  const m = rec(o.message);
  if (!m || typeof m.id !== "string" || !m.id || !rec(m.usage)) return undefined;
  const model = typeof m.model === "string" && m.model ? m.model : "unknown";
  if (model === "<synthetic>") return undefined;
  const out: MessageUsage = { message_id: m.id, model, usage: parseUsage(m.usage), sidechain: o.isSidechain === true };
  if (typeof o.timestamp === "string") out.timestamp = o.timestamp;
  return out;
}

export interface TurnUsage {
  usage: Usage;
  model_usage: ModelUsage;
  /** API messages counted (streamed lines of one message count once). */
  messages: number;
}

/** Folds MessageUsage values, one per message id (largest value of each field when repeated). */
export class UsageAccumulator {
  private readonly byId = new Map<string, MessageUsage>();

  add(mu: MessageUsage): void {
    const prev = this.byId.get(mu.message_id);
    this.byId.set(mu.message_id, prev ? { ...prev, usage: maxUsage(prev.usage, mu.usage) } : mu);
  }

  result(): TurnUsage {
    const usage = emptyUsage();
    const model_usage: ModelUsage = {};
    for (const mu of this.byId.values()) {
      addUsage(usage, mu.usage);
      addUsage((model_usage[mu.model] ??= emptyUsage()), mu.usage);
    }
    return { usage, model_usage, messages: this.byId.size };
  }
}

/**
 * Usage of the lines given (raw JSONL strings or parsed objects), sub-agent (sidechain) lines included,
 * each message id counted once. Unparseable lines are ignored.
 */
export function usageOfLines(lines: Iterable<string | unknown>): TurnUsage {
  const acc = new UsageAccumulator();
  for (const line of lines) {
    let obj: unknown = line;
    if (typeof line === "string") {
      if (!line.includes('"assistant"')) continue;
      try {
        obj = JSON.parse(line);
      } catch {
        continue;
      }
    }
    const mu = messageUsageOf(obj);
    if (mu) acc.add(mu);
  }
  return acc.result();
}

/**
 * Usage of one turn: the transcript's lines appended since `fromOffset` (the file's size when the turn's
 * prompt was sent). Returns the usage and the offset after the last whole line read.
 */
export async function readTurnUsage(transcriptPath: string, fromOffset: number): Promise<TurnUsage & { end: number }> {
  const acc = new UsageAccumulator();
  let offset = fromOffset;
  for (;;) {
    const { text, end } = await readFrom(transcriptPath, offset, { upTo: "line" });
    if (end === offset) break;
    offset = end;
    for (const line of text.split("\n")) {
      if (!line.includes('"assistant"')) continue;
      try {
        const mu = messageUsageOf(JSON.parse(line));
        if (mu) acc.add(mu);
      } catch {
        // whole lines only are read, so this is a line that is not JSON: skipped
      }
    }
  }
  return { ...acc.result(), end: offset };
}

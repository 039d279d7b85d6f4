/**
 * Token usage from Claude's transcript lines. Every assistant line carries `message.usage` and
 * `message.model`, but a streamed reply is written as several lines (one per content block) that share
 * one `message.id` and repeat its usage: summing lines overcounts. Each API message is counted once;
 * when its lines disagree (a later line with the final output count) the largest value of each field wins.
 */
import { readFrom } from "../util/fs/files.js";
import {
  mayBe,
  messageUsageOf,
  parseTranscriptLine,
  transcriptLineOf,
  type MessageUsage,
  type Usage,
} from "./transcript-line.js";

export { messageUsageOf, parseUsage, type MessageUsage, type Usage } from "./transcript-line.js";

export type ModelUsage = Record<string, Usage>;

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
    if (typeof line === "string" && !mayBe(line, "assistant")) continue;
    const mu = messageUsageOf(typeof line === "string" ? parseTranscriptLine(line) : transcriptLineOf(line));
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
      if (!mayBe(line, "assistant")) continue;
      const mu = messageUsageOf(parseTranscriptLine(line));
      if (mu) acc.add(mu);
    }
  }
  return { ...acc.result(), end: offset };
}

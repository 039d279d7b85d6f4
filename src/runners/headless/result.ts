/**
 * A turn's `result` message → TurnResult. In a streaming-input session the CLI (2.1.330) reports `usage`,
 * `duration_ms` and `num_turns` per turn but `total_cost_usd`, `modelUsage` and `duration_api_ms` as running
 * totals of the process (a resumed one starts from the totals its transcript saved), so the engine keeps the
 * previous totals and subtracts.
 */
import { readFile } from "node:fs/promises";
import type { ModelUsage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { TurnResult } from "./types.js";

export interface Totals {
  cost_usd: number;
  api_ms: number;
  models: Record<string, ModelUsage>;
}

export function zeroTotals(): Totals {
  return { cost_usd: 0, api_ms: 0, models: {} };
}

const SUMMED = [
  "inputTokens",
  "outputTokens",
  "cacheReadInputTokens",
  "cacheCreationInputTokens",
  "webSearchRequests",
  "costUSD",
  "thinkingTokens",
  "cacheCreationEphemeral5mInputTokens",
  "cacheCreationEphemeral1hInputTokens",
] as const;

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Rounded to 1e-9 so subtracting running totals does not print 0.046620000000000002. */
function money(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

function modelDelta(now: ModelUsage, before: ModelUsage | undefined): ModelUsage {
  const d: ModelUsage = { ...now };
  for (const k of SUMMED) {
    if (now[k] === undefined) continue;
    d[k] = k === "costUSD" ? money(num(now[k]) - num(before?.[k])) : num(now[k]) - num(before?.[k]);
  }
  return d;
}

export function toTurnResult(m: SDKResultMessage, before: Totals, interrupted: boolean): { turn: TurnResult; totals: Totals } {
  const model_usage: Record<string, ModelUsage> = {};
  for (const [name, u] of Object.entries(m.modelUsage ?? {})) {
    const d = modelDelta(u, before.models[name]);
    if (SUMMED.some((k) => num(d[k]) !== 0)) model_usage[name] = d;
  }
  const u = m.usage;
  const turn: TurnResult = {
    claude_session_id: m.session_id,
    subtype: m.subtype,
    is_error: m.is_error,
    interrupted,
    result: m.subtype === "success" ? m.result : "",
    usage: {
      input_tokens: num(u?.input_tokens),
      output_tokens: num(u?.output_tokens),
      cache_creation_input_tokens: num(u?.cache_creation_input_tokens),
      cache_read_input_tokens: num(u?.cache_read_input_tokens),
    },
    model_usage,
    cost_usd: money(Math.max(0, num(m.total_cost_usd) - before.cost_usd)),
    total_cost_usd: num(m.total_cost_usd),
    duration_ms: num(m.duration_ms),
    duration_api_ms: Math.max(0, num(m.duration_api_ms) - before.api_ms),
    num_turns: num(m.num_turns),
    stop_reason: m.stop_reason,
    permission_denials: m.permission_denials ?? [],
  };
  if (m.terminal_reason) turn.terminal_reason = m.terminal_reason;
  if (m.subtype === "success") {
    if (m.structured_output !== undefined) turn.structured_output = m.structured_output;
    if (typeof m.api_error_status === "number") turn.api_error_status = m.api_error_status;
    // An API error ends the turn with subtype success, is_error true and the error as the text.
    if (m.is_error) {
      turn.error_subtype = m.terminal_reason ?? "api_error";
      turn.errors = [m.result];
    }
  } else {
    turn.error_subtype = m.subtype;
    turn.errors = m.errors;
  }
  const totals: Totals = {
    cost_usd: num(m.total_cost_usd) || before.cost_usd,
    api_ms: Math.max(before.api_ms, num(m.duration_api_ms)),
    models: { ...before.models, ...(m.modelUsage ?? {}) },
  };
  return { turn, totals };
}

/**
 * The totals a resumed conversation starts from: the last `cost-state` line of its transcript (the CLI's
 * internal format: read defensively; none found means zero, and the first turn then carries the earlier ones).
 */
export async function savedTotals(transcriptPath: string): Promise<Totals> {
  let text: string;
  try {
    text = await readFile(transcriptPath, "utf8");
  } catch {
    return zeroTotals();
  }
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    if (!line?.includes('"cost-state"')) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v !== "object" || v === null) continue;
      const rec = v as { type?: unknown; totalCostUSD?: unknown; totalAPIDuration?: unknown; modelUsage?: unknown };
      if (rec.type !== "cost-state") continue;
      const models =
        typeof rec.modelUsage === "object" && rec.modelUsage !== null ? (rec.modelUsage as Record<string, ModelUsage>) : {};
      return { cost_usd: num(rec.totalCostUSD), api_ms: num(rec.totalAPIDuration), models };
    } catch {
      /* a torn line: look further back */
    }
  }
  return zeroTotals();
}

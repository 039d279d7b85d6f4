/**
 * Per-session metrics for list_sessions {include_metadata} and the CLI's `cost`: turns, average and p95 turn time
 * and error rate from the execution history (within its retention), tokens and cost from the session's totals.
 */
import type { SessionMetricsView } from "../../api/index.js";
import type { SessionMetrics } from "../../history/executions.js";
import type { SessionRecord } from "../../store/schema.js";
import { sessionFields } from "./totals.js";

export function metricsOf(r: SessionRecord, m: SessionMetrics | undefined): SessionMetricsView {
  const totals = sessionFields(r, 0);
  return {
    turns: m?.turns ?? 0,
    avg_turn_ms: m?.avg_turn_ms ?? null,
    p95_turn_ms: m?.p95_turn_ms ?? null,
    error_rate: m?.error_rate ?? null,
    usage: totals.session_usage ?? {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
    cost_usd: totals.session_cost_usd ?? null,
    cost_complete: totals.session_cost_complete ?? true,
  };
}

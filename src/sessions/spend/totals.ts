/**
 * The session's totals from its record: the usage summed over its models and the cost at the known prices. Pure
 * sums, no reading and no waiting (cost.ts reads the transcripts into the record; budget.ts judges the totals).
 */
import type { SendOutput, SessionSummary } from "../../api/index.js";
import { addUsage, emptyUsage, USAGE_FIELDS, type ModelUsage, type Usage } from "../../claude/usage.js";
import { costOfModels } from "../../pricing.js";
import type { SessionRecord } from "../../store/schema.js";

type PublicUsage = NonNullable<SendOutput["usage"]>;

export type Totals = Pick<SessionSummary, "total_usage" | "total_cost_usd" | "cost_complete" | "limit_reached">;

export function publicUsage(u: Usage): PublicUsage {
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
  };
}

export function fromRecord(r: SessionRecord): ModelUsage {
  const out: ModelUsage = {};
  for (const [model, u] of Object.entries(r.usage_by_model ?? {})) {
    const x = emptyUsage();
    for (const f of USAGE_FIELDS) x[f] = u[f] ?? 0;
    out[model] = x;
  }
  return out;
}

/** The session's totals as a turn result carries them (session_usage, session_cost_usd, session_cost_complete, session_turns). */
export function sessionFields(
  r: SessionRecord,
  turns: number,
): Pick<SendOutput, "session_usage" | "session_cost_usd" | "session_cost_complete" | "session_turns"> {
  const mu = fromRecord(r);
  const total = emptyUsage();
  for (const u of Object.values(mu)) addUsage(total, u);
  const c = costOfModels(mu);
  return {
    session_usage: publicUsage(total),
    session_cost_usd: c.cost_usd,
    session_cost_complete: c.cost_complete,
    session_turns: turns,
  };
}

/** The session's cost so far from its record (what budgets count). */
export function spentOf(r: SessionRecord): ReturnType<typeof costOfModels> {
  return costOfModels(fromRecord(r));
}

/** Models in the session's totals that have no price (a budget cannot be enforced over them). */
export function unpricedModels(r: SessionRecord): string[] {
  return costOfModels(fromRecord(r)).unpriced_models;
}

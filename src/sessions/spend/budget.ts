/**
 * max_budget_usd cannot be bypassed: a budget is enforced only with prices, so a session with a budget is refused
 * when a model it would run (model, fallback_model) has no price, and one whose turns used a model without a price
 * (the CLI's fallback, a sub-agent's model, an alias that resolved to a new model) takes no more prompts: its cost
 * cannot be computed, and a budget fails closed. The operator adds prices in CLAUDE_SESSIONS_PRICES (src/price-file.ts).
 */
import { SessionError } from "../../core/errors.js";
import { PRICES_ENV } from "../../price-file.js";
import { addUsage, emptyUsage } from "../../claude/usage.js";
import { costOfModels, pricedOrAlias } from "../../pricing.js";
import type { SessionRecord } from "../../store/schema.js";
import { fromRecord, publicUsage, unpricedModels, type Totals } from "./totals.js";

export const PRICE_HOW =
  `Add a price for it to the operator's price file (${PRICES_ENV}: a JSON file of {"<model id or prefix*>": {"input", ` +
  `"output", "cache_write", "cache_read"}} in USD per million tokens; see docs/tools.md "Usage, cost and budgets") ` +
  `and restart the server`;

/** start/resume: INVALID_ARGUMENT when the session has a budget and a model it names has no price. */
export function checkBudgetModels(budget: number | undefined, models: Array<string | undefined>): void {
  if (budget === undefined) return;
  const unpriced = [...new Set(models.filter((m): m is string => typeof m === "string" && m.length > 0 && !pricedOrAlias(m)))];
  if (!unpriced.length) return;
  throw new SessionError(
    "INVALID_ARGUMENT",
    `max_budget_usd cannot be enforced: the model ${unpriced.join(", ")} has no price, so the session's cost could not be computed; nothing was started.`,
    {
      suggestion: `${PRICE_HOW}, or leave out max_budget_usd.`,
      details: { unpriced_models: unpriced },
    },
  );
}

/** The refusal of a prompt to a budgeted session whose turns used models without a price. */
export function unpricedBudgetError(sessionId: string, unpriced: string[]): SessionError {
  return new SessionError(
    "LIMIT_REACHED",
    `session ${sessionId} has a max_budget_usd, and its turns used ${unpriced.join(", ")}, which has no price: its ` +
      `cost cannot be computed, so the budget counts as spent (it fails closed).`,
    { suggestion: `${PRICE_HOW}; or start a new session without max_budget_usd.`, details: { unpriced_models: unpriced } },
  );
}

/**
 * resume: the budget it will run under (the new one, else the stored one) must be enforceable: the session's model
 * and fallback have prices, and so do the models its turns already used.
 */
export function checkResumeBudget(
  rec: SessionRecord,
  input: { max_budget_usd?: number | undefined; model?: string | undefined; fallback_model?: string | undefined },
): void {
  const budget = input.max_budget_usd ?? rec.max_budget_usd;
  if (budget === undefined) return;
  const fallback = typeof rec.options.fallback_model === "string" ? rec.options.fallback_model : undefined;
  checkBudgetModels(budget, [input.model ?? rec.model, input.fallback_model ?? fallback]);
  const used = unpricedModels(rec);
  if (used.length) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `max_budget_usd cannot be enforced: session ${rec.session_id}'s turns used ${used.join(", ")}, which has no price; nothing was started.`,
      {
        suggestion: `${PRICE_HOW}.`,
        details: { unpriced_models: used },
      },
    );
  }
}

/** The session's totals as list_sessions shows them (nothing when nothing was counted). */
export function sessionTotals(r: SessionRecord): Totals {
  const mu = fromRecord(r);
  const out: Totals = {};
  if (Object.keys(mu).length === 0 && r.max_budget_usd === undefined) return out;
  const total = emptyUsage();
  for (const u of Object.values(mu)) addUsage(total, u);
  const c = costOfModels(mu);
  out.total_usage = publicUsage(total);
  out.total_cost_usd = c.cost_usd;
  out.cost_complete = c.cost_complete;
  if (r.max_budget_usd !== undefined && !c.cost_complete)
    out.limit_reached = unpricedBudgetError(r.session_id, c.unpriced_models).message;
  else if (r.max_budget_usd !== undefined && c.cost_usd !== null && c.cost_usd >= r.max_budget_usd)
    out.limit_reached = budgetText(r, c.cost_usd);
  return out;
}

function budgetText(r: SessionRecord, cost: number): string {
  return `max_budget_usd: the session has cost $${cost.toFixed(4)} of its $${r.max_budget_usd} budget`;
}

/** LIMIT_REACHED when the session's cost has reached its max_budget_usd, or cannot be computed (fails closed). */
export function checkBudget(r: SessionRecord): void {
  if (r.max_budget_usd === undefined) return;
  const c = costOfModels(fromRecord(r));
  if (!c.cost_complete) throw unpricedBudgetError(r.session_id, c.unpriced_models);
  const cost = c.cost_usd;
  if (cost === null || cost < r.max_budget_usd) return;
  throw new SessionError("LIMIT_REACHED", `session ${r.session_id} has spent its budget: ${budgetText(r, cost)}.`, {
    suggestion: "resume_session with a higher max_budget_usd (after the session ends), or start a new session.",
  });
}

/**
 * A team's budget pool: a teammate that a lead with max_budget_usd starts (start_teammate) shares the lead's budget.
 * It gets what is left of the pool at that moment as its own max_budget_usd, and its record names the lead
 * (`budget_pool`); the pool is the lead's max_budget_usd, and its spend is the lead's cost plus the cost of every
 * teammate in it. Once that reaches the lead's budget, every session of the pool is refused further prompts
 * (LIMIT_REACHED), and a tmux/pty turn that crosses it is interrupted (budget-watch.ts). A model without a price
 * in any of them fails the pool closed, as a session's own budget does.
 */
import { SessionError } from "../../core/errors.js";
import type { SessionRecord } from "../../store/schema.js";
import { checkBudget, unpricedBudgetError } from "./budget.js";
import { spentOf } from "./totals.js";
import type { Deps } from "../deps.js";

type Sessions = Record<string, SessionRecord>;

export interface PoolSpend {
  lead: string;
  cap: number;
  spent: number;
  unpriced: string[];
}

/** The lead whose budget a session's spend counts in: its pool's lead, or itself when it leads a pool. */
function leadOf(r: SessionRecord, all: Sessions): SessionRecord | undefined {
  if (r.budget_pool !== undefined) {
    const lead = Object.hasOwn(all, r.budget_pool) ? all[r.budget_pool] : undefined;
    return lead?.max_budget_usd !== undefined ? lead : undefined;
  }
  if (r.max_budget_usd === undefined) return undefined;
  return Object.values(all).some((x) => x.budget_pool === r.session_id) ? r : undefined;
}

/** The pool's budget and what its sessions spent (the lead's cost and its pooled teammates'). */
export function poolSpend(lead: SessionRecord, all: Sessions): PoolSpend {
  let spent = 0;
  const unpriced = new Set<string>();
  for (const x of Object.values(all)) {
    if (x.session_id !== lead.session_id && x.budget_pool !== lead.session_id) continue;
    const c = spentOf(x);
    spent += c.cost_usd ?? 0;
    for (const m of c.unpriced_models) unpriced.add(m);
  }
  return { lead: lead.session_id, cap: lead.max_budget_usd ?? 0, spent, unpriced: [...unpriced] };
}

/** Whether the pool session `r` counts in (in `all`, the store's sessions) still has budget left (none: true). */
export function poolLeft(r: SessionRecord, all: Sessions): boolean {
  const lead = leadOf(all[r.session_id] ?? r, all);
  if (!lead) return true;
  const p = poolSpend(lead, all);
  return !p.unpriced.length && p.spent < p.cap;
}

/** The pool a session counts in, with its figures now; undefined when it is in none. */
export async function poolOfSession(d: Deps, r: SessionRecord): Promise<PoolSpend | undefined> {
  if (r.budget_pool === undefined && r.max_budget_usd === undefined) return undefined;
  const all = (await d.store.read()).sessions;
  const lead = leadOf(all[r.session_id] ?? r, all);
  return lead ? poolSpend(lead, all) : undefined;
}

/** LIMIT_REACHED when the session's own budget is spent, or the pool it counts in is. */
export async function checkSpendable(d: Deps, r: SessionRecord): Promise<void> {
  checkBudget(r);
  const p = await poolOfSession(d, r);
  if (!p) return;
  if (p.unpriced.length) throw unpricedBudgetError(r.session_id, p.unpriced);
  if (p.spent < p.cap) return;
  throw new SessionError(
    "LIMIT_REACHED",
    `session ${r.session_id} shares the team budget of its lead ${p.lead}: the lead and its teammates have cost $${p.spent.toFixed(4)} ` +
      `of its $${p.cap} budget.`,
    {
      suggestion: `resume the lead ${p.lead} with a higher max_budget_usd (after it ends), or start a new session.`,
      details: { budget_pool: p.lead, pool_cost_usd: p.spent, max_budget_usd: p.cap },
    },
  );
}

/**
 * start_teammate by a lead: the teammate's max_budget_usd (what the pool has left now), or undefined when the lead
 * has no budget; LIMIT_REACHED when nothing is left, and nothing is started.
 */
export async function teammateBudget(d: Deps, lead: SessionRecord): Promise<number | undefined> {
  if (lead.max_budget_usd === undefined) return undefined;
  const all = (await d.store.read()).sessions;
  const p = poolSpend(all[lead.session_id] ?? lead, all);
  if (p.unpriced.length) throw unpricedBudgetError(lead.session_id, p.unpriced);
  const left = p.cap - p.spent;
  if (left <= 0) {
    throw new SessionError(
      "LIMIT_REACHED",
      `the team budget of lead ${lead.session_id} is spent ($${p.spent.toFixed(4)} of $${p.cap}); no teammate was started.`,
      {
        suggestion: "Ask the client to resume the lead with a higher max_budget_usd.",
        details: { budget_pool: lead.session_id, pool_cost_usd: p.spent, max_budget_usd: p.cap },
      },
    );
  }
  return Math.floor(left * 1e6) / 1e6;
}

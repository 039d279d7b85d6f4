/**
 * The one price table. USD per million tokens, standard (non-batch) API rates, read on 2026-11-23 from
 * Anthropic's pricing documentation:
 *   https://platform.claude.com/docs/en/about-claude/pricing  ("Model pricing": Fable, Mythos, Opus 4–5 rows)
 *   https://platform.claude.com/docs/en/docs/about-claude/pricing  (the same table's Sonnet 3.7–4.6, Haiku and
 *     Opus 3 rows)
 *   https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview  (Claude Sonnet 5: "Pricing")
 *   https://platform.claude.com/docs/zh-CN/models/opus-5-5/overview  (Claude Opus 5.5: "Pricing"; its cache read is
 *     0.05× input, not the usual 0.1×)
 * Columns: base input, 5-minute cache write, 1-hour cache write, cache hit (read), output.
 *
 * Left out on purpose (cost is null with a note, never a guess):
 * - Claude Sonnet 5.5: its model page gives a $0.20 cache read, while other sources report a cut to $0.10
 *   from 2026-10-07; until the pricing page is read again the rate is not known.
 * - Claude Haiku 5.5: priced by prompt length per request, which a usage total cannot tell.
 * Not modelled: batch discounts, the US-only inference multiplier, and the long-context rates some models
 * charge per request above a prompt size (a sum of usage cannot tell which requests crossed it).
 */
import type { Usage } from "./claude/usage.js";
import { operatorPrice, type ModelPrice } from "./price-file.js";

export const PRICES_AS_OF = "2026-11-23";
export const PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing";

export type { ModelPrice };

const p = (input: number, cache_write_5m: number, cache_write_1h: number, cache_read: number, output: number): ModelPrice => ({
  input,
  cache_write_5m,
  cache_write_1h,
  cache_read,
  output,
});

/** Keyed by the model id without its date suffix (see canonicalModel). */
export const PRICES: Readonly<Record<string, ModelPrice>> = {
  "claude-fable-5-1": p(10, 12.5, 20, 0.25, 50),
  "claude-mythos-5-1": p(10, 12.5, 20, 0.25, 50),
  "claude-fable-5": p(10, 12.5, 20, 1, 50),
  "claude-mythos-5": p(10, 12.5, 20, 1, 50),
  "claude-opus-5-5": p(4, 5, 8, 0.2, 20),
  "claude-opus-5": p(5, 6.25, 10, 0.5, 25),
  "claude-opus-4-8": p(5, 6.25, 10, 0.5, 25),
  "claude-opus-4-7": p(5, 6.25, 10, 0.5, 25),
  "claude-opus-4-6": p(5, 6.25, 10, 0.5, 25),
  "claude-opus-4-5": p(5, 6.25, 10, 0.5, 25),
  "claude-opus-4-1": p(15, 18.75, 30, 1.5, 75),
  "claude-opus-4": p(15, 18.75, 30, 1.5, 75),
  "claude-sonnet-5": p(2, 2.5, 4, 0.2, 10),
  "claude-sonnet-4-6": p(3, 3.75, 6, 0.3, 15),
  "claude-sonnet-4-5": p(3, 3.75, 6, 0.3, 15),
  "claude-sonnet-4": p(3, 3.75, 6, 0.3, 15),
  "claude-3-7-sonnet": p(3, 3.75, 6, 0.3, 15),
  "claude-haiku-4-5": p(1, 1.25, 2, 0.1, 5),
  "claude-3-5-haiku": p(0.8, 1, 1.6, 0.08, 4),
  "claude-3-opus": p(15, 18.75, 30, 1.5, 75),
  "claude-3-haiku": p(0.25, 0.3, 0.5, 0.03, 1.25),
};

/**
 * The table key for a model id as transcripts and providers spell it: drops a date snapshot
 * (`-20250929`, `@20250805`), a context marker (`[1m]`), Bedrock's `anthropic.` prefix and `-v1:0` suffix,
 * and the `-0` of `claude-opus-4-0`. Nothing else is folded: an unknown version stays unknown.
 */
export function canonicalModel(model: string): string {
  let m = model.trim().toLowerCase();
  m = m.replace(/^(?:[a-z]{2}\.)?anthropic\./, "");
  m = m.replace(/\[[^\]]*\]$/, "");
  m = m.replace(/-v\d+(?::\d+)?$/, "");
  m = m.replace(/[-@]\d{8}$/, "");
  m = m.replace(/^(claude-(?:opus|sonnet)-4)-0$/, "$1");
  return m;
}

const lookups = new Map<string, ModelPrice | undefined>();

/** The operator's price (CLAUDE_SESSIONS_PRICES) for the model, else the table's. */
export function priceOf(model: string): ModelPrice | undefined {
  if (lookups.has(model)) return lookups.get(model);
  const key = canonicalModel(model);
  const price = operatorPrice(key, model) ?? PRICES[key];
  if (lookups.size < 1000) lookups.set(model, price);
  return price;
}

export interface Cost {
  cost_usd: number | null;
  note?: string;
}

/** Cost in USD of `usage` on `model`, or null when the model is not in the table. */
export function costUsd(usage: Usage, model: string): number | null {
  const price = priceOf(model);
  if (!price) return null;
  const dollars =
    usage.input_tokens * price.input +
    usage.cache_creation_5m_input_tokens * price.cache_write_5m +
    usage.cache_creation_1h_input_tokens * price.cache_write_1h +
    usage.cache_read_input_tokens * price.cache_read +
    usage.output_tokens * price.output;
  return round6(dollars / 1_000_000);
}

/** costUsd with the reason when there is no number. */
export function costOf(usage: Usage, model: string): Cost {
  const c = costUsd(usage, model);
  if (c !== null) return { cost_usd: c };
  return { cost_usd: null, note: unpricedNote([model]) };
}

export function unpricedNote(models: string[]): string {
  return (
    `no price for ${models.join(", ")} in the table of ${PRICES_AS_OF} (src/pricing.ts) or the operator's price file ` +
    `(CLAUDE_SESSIONS_PRICES); its tokens are counted but not priced`
  );
}

/** The CLI's model aliases: resolved by the CLI to a model the transcript names (and the turn is priced by that). */
const ALIASES = new Set(["default", "opus", "sonnet", "haiku", "opusplan", "best"]);

/** The model can be priced, or is an alias the CLI resolves (its turns are checked once they name the model). */
export function pricedOrAlias(model: string): boolean {
  const m = model
    .trim()
    .toLowerCase()
    .replace(/\[[^\]]*\]$/, "");
  return ALIASES.has(m) || priceOf(model) !== undefined;
}

/**
 * Cost of usage split by model: the sum over priced models, null when none is priced, and the models left
 * unpriced (a non-empty list means the sum is incomplete).
 */
export function costOfModels(byModel: Record<string, Usage>): {
  cost_usd: number | null;
  cost_complete: boolean;
  unpriced_models: string[];
  note?: string;
} {
  let sum = 0;
  let priced = 0;
  const unpriced: string[] = [];
  for (const [model, usage] of Object.entries(byModel)) {
    const c = costUsd(usage, model);
    if (c === null) unpriced.push(model);
    else {
      sum += c;
      priced++;
    }
  }
  const out: { cost_usd: number | null; cost_complete: boolean; unpriced_models: string[]; note?: string } = {
    cost_usd: priced > 0 || unpriced.length === 0 ? round6(sum) : null,
    cost_complete: unpriced.length === 0,
    unpriced_models: unpriced,
  };
  if (unpriced.length > 0) out.note = unpricedNote(unpriced);
  return out;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

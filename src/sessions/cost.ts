/**
 * Usage and cost of tmux and pty sessions, read from Claude's transcript. When a prompt is delivered the
 * transcript's size is remembered; when the turn ends (the fold's turn_count grows) the lines appended since
 * are read, after a short bounded wait (the assistant line lands 25–80 ms after Stop). Each API message
 * counts once (streamed replies repeat a message id over several lines); sub-agent (sidechain) lines count.
 * The session's totals live in its record with a cursor (path, offset) so every byte is counted once, by
 * one server; the turn is recorded in the execution history and the transcript index is told to look.
 */
import { stat } from "node:fs/promises";
import type { SendOutput, SessionSummary } from "../api/index.js";
import { transcriptPath } from "../claude/transcript.js";
import { addUsage, emptyUsage, messageUsageOf, UsageAccumulator, USAGE_FIELDS, type ModelUsage, type TurnUsage, type Usage } from "../claude/usage.js";
import { SessionError } from "../core/errors.js";
import type { Folded } from "../events/reducer.js";
import { costOfModels } from "../pricing.js";
import type { SessionRecord } from "../store/schema.js";
import { readFrom } from "../util/files.js";
import type { Deps } from "./deps.js";

/** How long a turn's end waits for the transcript's last assistant line, at most. */
const SETTLE_MAX_MS = 600;
const SETTLE_POLL_MS = 20;
/** Without a reply line: how long the file must have been still before the turn is read as it is. */
const SETTLE_QUIET_MS = 200;

type CostFields = Pick<SendOutput, "usage" | "model_usage" | "cost_usd">;
type PublicUsage = NonNullable<SendOutput["usage"]>;

interface Begun {
  promptNo: number;
  prompt: string;
  startedAt: string;
  path: string;
  offset: number;
}

/** Per-process memory of turns under way and turns being settled. */
export class Ledger {
  readonly begun = new Map<string, Begun>();
  readonly settling = new Map<string, { turn: number; p: Promise<CostFields> }>();
}

export function publicUsage(u: Usage): PublicUsage {
  return { input_tokens: u.input_tokens, output_tokens: u.output_tokens, cache_creation_input_tokens: u.cache_creation_input_tokens, cache_read_input_tokens: u.cache_read_input_tokens };
}

function fromRecord(r: SessionRecord): ModelUsage {
  const out: ModelUsage = {};
  for (const [model, u] of Object.entries(r.usage_by_model ?? {})) {
    const x = emptyUsage();
    for (const f of USAGE_FIELDS) x[f] = u[f] ?? 0;
    out[model] = x;
  }
  return out;
}

type Totals = Pick<SessionSummary, "total_usage" | "total_cost_usd" | "limit_reached">;

/** The session's totals as list_sessions shows them (nothing when nothing was counted). */
export function sessionTotals(r: SessionRecord): Totals {
  const mu = fromRecord(r);
  const out: Totals = {};
  if (Object.keys(mu).length === 0 && r.max_budget_usd === undefined) return out;
  const total = emptyUsage();
  for (const u of Object.values(mu)) addUsage(total, u);
  const cost = costOfModels(mu).cost_usd;
  out.total_usage = publicUsage(total);
  out.total_cost_usd = cost;
  if (r.max_budget_usd !== undefined && cost !== null && cost >= r.max_budget_usd) out.limit_reached = budgetText(r, cost);
  return out;
}

function budgetText(r: SessionRecord, cost: number): string {
  return `max_budget_usd: the session has cost $${cost.toFixed(4)} of its $${r.max_budget_usd} budget`;
}

/** LIMIT_REACHED when the session's cost has reached its max_budget_usd. */
export function checkBudget(r: SessionRecord): void {
  if (r.max_budget_usd === undefined) return;
  const cost = costOfModels(fromRecord(r)).cost_usd;
  if (cost === null || cost < r.max_budget_usd) return;
  throw new SessionError("LIMIT_REACHED", `session ${r.session_id} has spent its budget: ${budgetText(r, cost)}.`, {
    suggestion: "resume_session with a higher max_budget_usd (after the session ends), or start a new session.",
  });
}

async function sizeOf(path: string): Promise<number> {
  return stat(path).then((s) => s.size, () => 0);
}

function pathOf(d: Deps, r: SessionRecord, fold?: Folded): string {
  return transcriptPath(d.cfg.claudeConfigDir, r.cwd, fold?.claude_session_id ?? r.claude_session_id);
}

/** Remembers where the transcript stood when prompt number `promptNo` was delivered. */
export async function beginTurn(d: Deps, r: SessionRecord, fold: Folded, promptNo: number, prompt: string): Promise<void> {
  const path = pathOf(d, r, fold);
  const offset = await sizeOf(path);
  d.ledger.begun.set(r.session_id, { promptNo, prompt, startedAt: new Date().toISOString(), path, offset });
  // A new transcript (new session, fork, adopted conversation): totals count from here.
  if (r.usage_cursor?.path !== path) {
    await d.store.patch(r.session_id, (x) => {
      if (x.usage_cursor?.path !== path) x.usage_cursor = { path, offset };
    });
  }
}

/** The usage of turn number `turn` (which has ended), settled once per process; later calls share it. */
export function settleTurn(d: Deps, id: string, turn: number, fold: Folded): Promise<CostFields> {
  const cur = d.ledger.settling.get(id);
  if (cur && cur.turn === turn) return cur.p;
  const p = settle(d, id, turn, { ...fold }).catch((e: unknown) => {
    d.log.warn(`${id}: reading the turn's usage failed: ${String(e)}`);
    return {};
  });
  d.ledger.settling.set(id, { turn, p });
  return p;
}

/** Waits for the usage of a turn being settled (so a budget check sees it). */
export async function settled(d: Deps, id: string): Promise<void> {
  await d.ledger.settling.get(id)?.p;
}

interface Read {
  turn: TurnUsage;
  total: TurnUsage;
  end: number;
}

/** Reads from `from`; lines starting at or after `turnFrom` count for the turn, at or after `totalFrom` for the total. */
async function readUsage(path: string, from: number, turnFrom: number, totalFrom: number): Promise<Read & { reply: boolean }> {
  const turn = new UsageAccumulator();
  const total = new UsageAccumulator();
  let offset = from;
  let reply = false;
  for (;;) {
    const { text, end } = await readFrom(path, offset, { upTo: "line" });
    if (end === offset) break;
    let at = offset;
    for (const line of text.split("\n")) {
      const start = at;
      at += Buffer.byteLength(line) + 1;
      if (!line.includes('"assistant"')) continue;
      let obj: unknown;
      try {
        obj = JSON.parse(line);
      } catch {
        continue;
      }
      const mu = messageUsageOf(obj);
      if (!mu) continue;
      if (start >= turnFrom) turn.add(mu);
      if (start >= totalFrom) total.add(mu);
      if (start >= turnFrom && !mu.sidechain) reply = /"type":\s*"text"/.test(line);
    }
    offset = end;
  }
  return { turn: turn.result(), total: total.result(), end: offset, reply };
}

async function settle(d: Deps, id: string, turn: number, fold: Folded): Promise<CostFields> {
  const r = await d.store.get(id);
  if (!r) return {};
  const b = d.ledger.begun.get(id);
  const begun = b && b.promptNo === turn ? b : undefined;
  const path = begun?.path ?? pathOf(d, r, fold);
  const cursor = r.usage_cursor?.path === path ? r.usage_cursor.offset : (begun?.offset ?? (await sizeOf(path)));
  // A prompt queued during the previous turn was remembered mid-turn: what that turn wrote after it is counted
  // with that turn (whose settlement moved the cursor), not with this one.
  const turnFrom = begun ? Math.max(begun.offset, cursor) : cursor;
  const from = Math.min(turnFrom, cursor);
  // The last assistant line lands shortly after Stop: read until a reply is there and the file is still.
  const t0 = Date.now();
  // A turn without a reply line (interrupted, an API error, no transcript) ends the wait once the file is quiet.
  let read = await readUsage(path, from, turnFrom, cursor);
  let grewAt = t0;
  while (Date.now() - t0 < SETTLE_MAX_MS) {
    const size = await sizeOf(path);
    if (size === read.end && (read.reply || (Date.now() - t0 >= SETTLE_QUIET_MS && Date.now() - grewAt >= SETTLE_QUIET_MS / 2))) break;
    await new Promise((res) => setTimeout(res, SETTLE_POLL_MS));
    const end = read.end;
    read = await readUsage(path, from, turnFrom, cursor);
    if (read.end !== end) grewAt = Date.now();
  }
  await d.store.patch(id, (x) => {
    const at = x.usage_cursor?.path === path ? x.usage_cursor.offset : cursor;
    if (at !== cursor || read.end <= at) return; // counted already (another server, or nothing new)
    const mu = fromRecord(x);
    for (const [model, u] of Object.entries(read.total.model_usage)) addUsage((mu[model] ??= emptyUsage()), u);
    x.usage_by_model = Object.fromEntries(Object.entries(mu).map(([m, u]) => [m, { ...u }]));
    x.usage_cursor = { path, offset: read.end };
  });
  const cost = costOfModels(read.turn.model_usage).cost_usd;
  const out: CostFields = {
    usage: publicUsage(read.turn.usage),
    model_usage: Object.fromEntries(Object.entries(read.turn.model_usage).map(([m, u]) => [m, publicUsage(u)])),
    cost_usd: cost,
  };
  if (d.history) {
    const outcome = fold.last_turn ?? "completed";
    d.history.recordTurn({
      session_id: id,
      claude_session_id: fold.claude_session_id ?? r.claude_session_id,
      prompt: begun?.prompt ?? fold.last_prompt ?? "",
      ...(fold.last_response !== undefined ? { response: fold.last_response } : {}),
      started_at: begun?.startedAt ?? new Date().toISOString(),
      ended_at: new Date(),
      outcome,
      ...(outcome === "failed" && fold.last_error ? { error: fold.last_error } : {}),
      usage: read.turn.usage,
      cost_usd: cost,
    });
    d.history.noticeAppend([path]);
  }
  if (begun) d.ledger.begun.delete(id);
  return out;
}

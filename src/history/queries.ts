/**
 * Reading the index: conversations newest first, one conversation's items page by page, and usage totals
 * grouped for `cost`. Pure functions over an open connection; the History service adds the indexing state.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { z } from "zod";
import { addUsage, emptyUsage, type ModelUsage, type Usage } from "../claude/usage.js";
import { costOfModels } from "../pricing.js";
import type { ToolCall } from "./lines.js";
import { decodeCursor, encodeCursor, iso, num, strOrNull, timeArg, titleOf, usageOfRow, type Row } from "./rows.js";

export interface ConversationInfo {
  claude_session_id: string;
  cwd: string | null;
  project: string;
  title: string | null;
  first_activity: string | null;
  last_activity: string | null;
  turns: number;
  items: number;
  size_bytes: number;
  models: string[];
  usage: Usage;
  cost_usd: number | null;
  cost_complete: boolean;
  unpriced_models: string[];
}

export interface ListArgs {
  cwd?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

/** A statement's rows as arrays of column values (node:sqlite's types describe only the object form). */
function arrays(st: StatementSync, ...params: SQLInputValue[]): unknown[][] {
  st.setReturnArrays(true);
  const rows: unknown = st.all(...params);
  return Array.isArray(rows) ? rows.filter((r): r is unknown[] => Array.isArray(r)) : [];
}

const USAGE_COLS = "conv, model, input, output, cache_5m, cache_1h, cache_read";

function usageByConv(db: DatabaseSync, ids: number[]): Map<number, ModelUsage> {
  const out = new Map<number, ModelUsage>();
  if (ids.length === 0) return out;
  // A long page reads the whole (small) table once rather than looking each conversation up.
  const rows =
    ids.length > 500
      ? arrays(db.prepare(`SELECT ${USAGE_COLS} FROM conv_usage`))
      : arrays(
          db.prepare(`SELECT ${USAGE_COLS} FROM conv_usage WHERE conv IN (SELECT value FROM json_each(?))`),
          JSON.stringify(ids),
        );
  for (const [conv, model, input, output, c5, c1, read] of rows) {
    const id = num(conv);
    let m = out.get(id);
    if (!m) out.set(id, (m = {}));
    m[String(model)] = usageOfRow({ input, output, cache_5m: c5, cache_1h: c1, cache_read: read });
  }
  return out;
}

/** The columns a conversation's summary is made of, in this order (read as arrays: a list of 10,000 makes no row objects). */
const INFO_COLS =
  "id, claude_session_id, project, cwd, COALESCE(custom_title, summary, first_prompt), first_at, last_at, turns, items, size, models";

function infoOf(c: unknown[], mu: ModelUsage): ConversationInfo {
  const usage = emptyUsage();
  for (const u of Object.values(mu)) addUsage(usage, u);
  const cost = costOfModels(mu);
  return {
    claude_session_id: String(c[1]),
    cwd: strOrNull(c[3]),
    project: String(c[2]),
    title: strOrNull(c[4]),
    first_activity: iso(c[5]),
    last_activity: iso(c[6]),
    turns: num(c[7]),
    items: num(c[8]),
    size_bytes: num(c[9]),
    models: String(c[10] ?? "")
      .split(",")
      .filter(Boolean),
    usage,
    cost_usd: cost.cost_usd,
    cost_complete: cost.cost_complete,
    unpriced_models: cost.unpriced_models,
  };
}

function info(r: Row, mu: ModelUsage): ConversationInfo {
  return infoOf(
    [r.id, r.claude_session_id, r.project, r.cwd, titleOf(r), r.first_at, r.last_at, r.turns, r.items, r.size, r.models],
    mu,
  );
}

const listCursor = z.tuple([z.number(), z.number()]);

/** Conversations with activity in [since, until], newest last activity first; `cursor` continues a list. */
export function listConversations(
  db: DatabaseSync,
  args: ListArgs,
): { conversations: ConversationInfo[]; next_cursor: string | null; total: number } {
  const limit = Math.max(1, Math.min(args.limit ?? 50, 10_000));
  const where: string[] = ["last_at IS NOT NULL"];
  const params: (string | number)[] = [];
  if (args.cwd !== undefined) (where.push("cwd = ?"), params.push(args.cwd));
  const since = timeArg("since", args.since);
  const until = timeArg("until", args.until);
  if (since !== undefined) (where.push("last_at >= ?"), params.push(since));
  if (until !== undefined) (where.push("first_at <= ?"), params.push(until));
  const total = num(db.prepare(`SELECT count(*) AS n FROM conversations WHERE ${where.join(" AND ")}`).get(...params)?.n);
  if (args.cursor) {
    const [at, id] = decodeCursor(args.cursor, listCursor);
    where.push("(last_at < ? OR (last_at = ? AND id < ?))");
    params.push(at, at, id);
  }
  const rows = arrays(
    db.prepare(`SELECT ${INFO_COLS} FROM conversations WHERE ${where.join(" AND ")} ORDER BY last_at DESC, id DESC LIMIT ?`),
    ...params,
    limit + 1,
  );
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const usage = usageByConv(
    db,
    page.map((c) => num(c[0])),
  );
  const last = page[page.length - 1];
  return {
    conversations: page.map((c) => infoOf(c, usage.get(num(c[0])) ?? {})),
    next_cursor: rows.length > limit && last ? encodeCursor([num(last[6]), num(last[0])]) : null,
    total,
  };
}

export interface ConversationItem {
  index: number;
  role: "user" | "assistant";
  text: string;
  truncated?: boolean;
  time: string | null;
  tools?: ToolCall[];
  /** The message's last transcript entry (what resume_session resume_at takes). */
  uuid?: string;
}

export interface GetArgs {
  claude_session_id: string;
  cursor?: string;
  limit?: number;
  from?: "start" | "end";
  max_chars?: number;
}

export interface ConversationPage {
  conversation: ConversationInfo & { model_usage: ModelUsage };
  items: ConversationItem[];
  /** Items after this page (pass back to read on; also works later for items appended since). */
  next_cursor: string | null;
  /** Items before this page; null at the start. */
  prev_cursor: string | null;
  has_more_after: boolean;
  has_more_before: boolean;
}

const itemCursor = z.tuple([z.enum(["after", "before"]), z.number().int()]);

function toolsOf(v: unknown): ToolCall[] | undefined {
  if (typeof v !== "string") return undefined;
  try {
    const parsed = z.array(z.object({ name: z.string(), input: z.string() })).safeParse(JSON.parse(v));
    return parsed.success && parsed.data.length ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** One conversation's items, `limit` at a time, forward (after a cursor) or backward (before it). */
export function getConversation(db: DatabaseSync, args: GetArgs): ConversationPage | undefined {
  const r = db.prepare("SELECT * FROM conversations WHERE claude_session_id = ?").get(args.claude_session_id);
  if (!r) return undefined;
  const id = num(r.id);
  const limit = Math.max(1, Math.min(args.limit ?? 50, 500));
  const maxChars = Math.max(100, args.max_chars ?? 4000);
  const [dir, seq] = args.cursor
    ? decodeCursor(args.cursor, itemCursor)
    : args.from === "end"
      ? (["before", Number.MAX_SAFE_INTEGER] as const)
      : (["after", 0] as const);
  const sql =
    dir === "after"
      ? "SELECT seq, role, text, tools, at, uuid FROM items WHERE conv = ? AND seq > ? ORDER BY seq ASC LIMIT ?"
      : "SELECT seq, role, text, tools, at, uuid FROM items WHERE conv = ? AND seq < ? ORDER BY seq DESC LIMIT ?";
  const rows = db.prepare(sql).all(id, seq, limit);
  if (dir === "before") rows.reverse();
  const items = rows.map((x): ConversationItem => {
    const text = String(x.text);
    const item: ConversationItem = {
      index: num(x.seq),
      role: x.role === "user" ? "user" : "assistant",
      text: text.length > maxChars ? text.slice(0, maxChars) : text,
      time: iso(x.at),
    };
    if (text.length > maxChars) item.truncated = true;
    const tools = toolsOf(x.tools);
    if (tools) item.tools = tools;
    if (typeof x.uuid === "string") item.uuid = x.uuid;
    return item;
  });
  const bounds = db.prepare("SELECT min(seq) AS lo, max(seq) AS hi FROM items WHERE conv = ?").get(id) ?? {};
  const first = items[0]?.index ?? (dir === "after" ? seq + 1 : seq);
  const lastIdx = items[items.length - 1]?.index ?? (dir === "after" ? seq : seq - 1);
  const hi = num(bounds.hi);
  const lo = bounds.lo === null || bounds.lo === undefined ? 1 : num(bounds.lo);
  const mu = usageByConv(db, [id]).get(id) ?? {};
  return {
    conversation: { ...info(r, mu), model_usage: mu },
    items,
    next_cursor: encodeCursor(["after", Math.min(lastIdx, Math.max(hi, 0))]),
    prev_cursor: first > lo ? encodeCursor(["before", first]) : null,
    has_more_after: lastIdx < hi,
    has_more_before: first > lo,
  };
}

export type GroupBy = "session" | "cwd" | "model" | "day";

export interface UsageRow {
  key: string;
  messages: number;
  usage: Usage;
  model_usage: ModelUsage;
  cost_usd: number | null;
  unpriced_models: string[];
}

export interface UsageArgs {
  by?: GroupBy;
  since?: string;
  until?: string;
  cwd?: string;
  claude_session_id?: string;
}

const KEY: Record<GroupBy, string> = {
  session: "c.claude_session_id",
  cwd: "coalesce(c.cwd, c.project)",
  model: "u.model",
  day: "strftime('%Y-%m-%d', u.at / 1000, 'unixepoch')",
};

export function emptyUsageReport(): { rows: UsageRow[]; total: UsageRow } {
  return {
    rows: [],
    total: { key: "total", messages: 0, usage: emptyUsage(), model_usage: {}, cost_usd: 0, unpriced_models: [] },
  };
}

/** Token usage and cost grouped by session, cwd, model or UTC day; each API message counted once. */
export function usageReport(db: DatabaseSync, args: UsageArgs): { rows: UsageRow[]; total: UsageRow } {
  const by = args.by ?? "session";
  const where: string[] = [];
  const params: (string | number)[] = [];
  const since = timeArg("since", args.since);
  const until = timeArg("until", args.until);
  if (since !== undefined) (where.push("u.at >= ?"), params.push(since));
  if (until !== undefined) (where.push("u.at <= ?"), params.push(until));
  if (args.cwd !== undefined) (where.push("c.cwd = ?"), params.push(args.cwd));
  if (args.claude_session_id !== undefined) (where.push("c.claude_session_id = ?"), params.push(args.claude_session_id));
  const sql = `SELECT ${KEY[by]} AS k, u.model AS model, count(*) AS n, sum(u.input) AS input, sum(u.output) AS output,
      sum(u.cache_5m) AS cache_5m, sum(u.cache_1h) AS cache_1h, sum(u.cache_read) AS cache_read
    FROM usage u JOIN conversations c ON c.id = u.conv ${where.length ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY k, u.model`;
  const groups = new Map<string, { n: number; mu: ModelUsage }>();
  const all: { n: number; mu: ModelUsage } = { n: 0, mu: {} };
  for (const r of db.prepare(sql).iterate(...params)) {
    const key = r.k === null || r.k === undefined ? "(unknown)" : String(r.k);
    const g = groups.get(key) ?? { n: 0, mu: {} };
    const u = usageOfRow(r);
    g.n += num(r.n);
    g.mu[String(r.model)] = addUsage(g.mu[String(r.model)] ?? emptyUsage(), u);
    groups.set(key, g);
    all.n += num(r.n);
    addUsage((all.mu[String(r.model)] ??= emptyUsage()), u);
  }
  const toRow = (key: string, g: { n: number; mu: ModelUsage }): UsageRow => {
    const usage = emptyUsage();
    for (const u of Object.values(g.mu)) addUsage(usage, u);
    const c = costOfModels(g.mu);
    return { key, messages: g.n, usage, model_usage: g.mu, cost_usd: c.cost_usd, unpriced_models: c.unpriced_models };
  };
  const rows = [...groups].map(([k, g]) => toRow(k, g));
  rows.sort((a, b) =>
    by === "day" ? (a.key < b.key ? 1 : -1) : (b.cost_usd ?? -1) - (a.cost_usd ?? -1) || (a.key < b.key ? -1 : 1),
  );
  return { rows, total: toRow("total", all) };
}

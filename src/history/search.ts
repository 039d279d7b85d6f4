/**
 * Full-text search over conversation items. The index is FTS5 with the trigram tokenizer, so text
 * without spaces (Japanese, Chinese) is found by substring, case-insensitively. A query is words and
 * "quoted phrases"; every one must occur in the same message. Terms of 3 characters or more use the
 * index; shorter ones (two-character Japanese/Chinese words, "CI") are checked with LIKE. A term that
 * begins with a Latin letter or digit must begin a word ("auth" finds "authentication", "test" does not
 * find "latest"). The newest matching messages (up to CANDIDATES) are ranked with BM25, best per
 * conversation.
 */
import type { DatabaseSync } from "node:sqlite";
import { iso, num, strOrNull, timeArg, titleOf } from "./rows.js";

export interface Term {
  text: string;
  phrase: boolean;
}

export interface SearchArgs {
  query: string;
  cwd?: string;
  since?: string;
  until?: string;
  limit?: number;
}

export interface SearchHit {
  claude_session_id: string;
  cwd: string | null;
  title: string | null;
  last_activity: string | null;
  /** Higher is better (BM25 of the best message; the number of matching messages when no term is indexable). */
  score: number;
  /** Matching messages in this conversation among those examined. */
  matches: number;
  /** The best message with each match between ** marks. */
  snippet: string;
  item: { index: number; role: string; time: string | null };
  /** What resume_session needs to continue this conversation. */
  resume: { claude_session_id: string; cwd: string | null };
}

export interface SearchResult {
  results: SearchHit[];
  terms: string[];
  /** Matching messages looked at; when it reaches the cap, older matches were not ranked. */
  examined: number;
  more_matches: boolean;
}

export const CANDIDATES = 2000;
const WORDISH = /^[\p{Script=Latin}\p{Nd}_]/u;

export function parseQuery(query: string): Term[] {
  const terms: Term[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(query); m; m = re.exec(query)) {
    const phrase = m[1] !== undefined;
    const text = (m[1] ?? m[2] ?? "").replace(/\s+/g, " ").trim();
    if (text && !terms.some((t) => t.text.toLowerCase() === text.toLowerCase())) terms.push({ text, phrase });
  }
  return terms;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const escapeLike = (s: string) => s.replace(/[\\%_]/g, "\\$&");

/** The regular expression that finds a term the way the search does. */
export function termRegex(t: Term): RegExp {
  const body = escapeRe(t.text).replace(/ /g, "\\s+");
  return new RegExp(WORDISH.test(t.text) ? `(?<![\\p{L}\\p{Nd}_])${body}` : body, "giu");
}

const regexCache = new Map<string, RegExp>();

/** Registers cs_match(text, pattern) on a connection: 1 when the (case-insensitive) pattern occurs in text. */
export function registerSearchFunctions(db: DatabaseSync): void {
  db.function("cs_match", { deterministic: true }, (text, pattern) => {
    if (typeof text !== "string" || typeof pattern !== "string") return 0;
    let re = regexCache.get(pattern);
    if (!re) {
      if (regexCache.size > 256) regexCache.clear();
      re = new RegExp(pattern, "iu");
      regexCache.set(pattern, re);
    }
    return re.test(text) ? 1 : 0;
  });
}

/** Up to ~200 characters around the first match, every match marked **like this**. */
export function snippet(text: string, terms: Term[], width = 200): string {
  const res = terms.map(termRegex);
  let first = text.length;
  for (const re of res) {
    re.lastIndex = 0;
    const m = re.exec(text);
    if (m && m.index < first) first = m.index;
  }
  if (first === text.length) first = 0;
  const start = Math.max(0, first - Math.floor(width / 4));
  const end = Math.min(text.length, start + width);
  let piece = text.slice(start, end).replace(/\s+/g, " ");
  const all = new RegExp(res.map((r) => `(?:${r.source})`).join("|"), "giu");
  piece = piece.replace(all, (m) => `**${m}**`);
  return `${start > 0 ? "…" : ""}${piece}${end < text.length ? "…" : ""}`;
}

export function searchConversations(db: DatabaseSync, args: SearchArgs): SearchResult {
  const terms = parseQuery(args.query);
  const limit = Math.max(1, Math.min(args.limit ?? 20, 200));
  if (terms.length === 0) return { results: [], terms: [], examined: 0, more_matches: false };
  const indexed = terms.filter((t) => [...t.text].length >= 3);
  const where: string[] = [];
  const params: (string | number)[] = [];
  let from: string;
  let rank: string;
  let order: string;
  if (indexed.length > 0) {
    from = "items_fts f JOIN items i ON i.id = f.rowid";
    where.push("items_fts MATCH ?");
    params.push(indexed.map((t) => `"${t.text.replace(/"/g, '""')}"`).join(" AND "));
    rank = "bm25(items_fts)";
    order = "f.rowid DESC";
  } else {
    from = "items i";
    rank = "0";
    order = "i.id DESC";
  }
  for (const t of terms) {
    if ([...t.text].length < 3) (where.push("i.text LIKE ? ESCAPE '\\'"), params.push(`%${escapeLike(t.text)}%`));
    if (WORDISH.test(t.text) || t.text.includes(" ")) (where.push("cs_match(i.text, ?)"), params.push(termRegex(t).source));
  }
  if (args.cwd !== undefined) (where.push("i.conv IN (SELECT id FROM conversations WHERE cwd = ?)"), params.push(args.cwd));
  const since = timeArg("since", args.since);
  const until = timeArg("until", args.until);
  if (since !== undefined) (where.push("i.at >= ?"), params.push(since));
  if (until !== undefined) (where.push("i.at <= ?"), params.push(until));
  const sql = `SELECT i.id AS id, i.conv AS conv, ${rank} AS rank FROM ${from} ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY ${order} LIMIT ?`;
  const rows = db.prepare(sql).all(...params, CANDIDATES);
  const best = new Map<number, { id: number; rank: number; n: number }>();
  for (const r of rows) {
    const conv = num(r.conv);
    const b = best.get(conv);
    const rk = num(r.rank);
    if (!b) best.set(conv, { id: num(r.id), rank: rk, n: 1 });
    else {
      b.n += 1;
      if (rk < b.rank) ((b.rank = rk), (b.id = num(r.id)));
    }
  }
  const scored = [...best].map(([conv, b]) => ({
    conv,
    ...b,
    score: indexed.length > 0 ? Math.round(-b.rank * 1000) / 1000 : b.n,
  }));
  scored.sort((a, b) => b.score - a.score || b.id - a.id);
  const convStmt = db.prepare("SELECT * FROM conversations WHERE id = ?");
  const itemStmt = db.prepare("SELECT seq, role, text, at FROM items WHERE id = ?");
  const results: SearchHit[] = [];
  for (const s of scored.slice(0, limit)) {
    const c = convStmt.get(s.conv);
    const it = itemStmt.get(s.id);
    if (!c || !it) continue;
    const sid = String(c.claude_session_id);
    const cwd = strOrNull(c.cwd);
    results.push({
      claude_session_id: sid,
      cwd,
      title: titleOf(c),
      last_activity: iso(c.last_at),
      score: s.score,
      matches: s.n,
      snippet: snippet(String(it.text), terms),
      item: { index: num(it.seq), role: String(it.role), time: iso(it.at) },
      resume: { claude_session_id: sid, cwd },
    });
  }
  return { results, terms: terms.map((t) => t.text), examined: rows.length, more_matches: rows.length >= CANDIDATES };
}

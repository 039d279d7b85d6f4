/**
 * The index's write side for one connection: conversations, items (with their full-text entries) and
 * usage. A conversation's running state is kept in memory while its file is read and written back by
 * flush(); the caller owns the transaction.
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { MessageUsage } from "../claude/usage.js";
import { titleFromPrompt, type LineItem, type ParsedLine } from "./lines.js";

interface LastItem {
  id: number;
  msgId: string | null;
  text: string;
  tools: string | null;
}

interface PendingItem extends LineItem {
  at: number | null;
  prompt: boolean;
}

export interface ConvState {
  id: number;
  seq: number;
  last: LastItem | null;
  /** The newest item, not written yet (more lines of the same streamed message may follow). */
  pending: PendingItem | null;
  cwd: string | null;
  customTitle: string | null;
  firstPrompt: string | null;
  firstAt: number | null;
  lastAt: number | null;
  turns: number;
  items: number;
  size: number;
  models: Set<string>;
}

type Row = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0);
const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

export class IndexWriter {
  private readonly st: Record<string, StatementSync>;
  private readonly convs = new Map<number, ConvState>();
  private newPending: string[] = [];

  constructor(private readonly db: DatabaseSync) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      convBySid: p("SELECT id FROM conversations WHERE claude_session_id = ?"),
      convInsert: p("INSERT INTO conversations(claude_session_id, project) VALUES (?, ?)"),
      convLoad: p("SELECT * FROM conversations WHERE id = ?"),
      convSave: p(
        "UPDATE conversations SET cwd=?, custom_title=?, first_prompt=?, first_at=?, last_at=?, turns=?, items=?, size=?, models=? WHERE id=?",
      ),
      lastItem: p("SELECT id, seq, msg_id, text, tools FROM items WHERE conv = ? ORDER BY seq DESC LIMIT 1"),
      itemInsert: p("INSERT INTO items(conv, seq, role, text, tools, at, uuid, msg_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      itemUpdate: p("UPDATE items SET text = ?, tools = ?, uuid = coalesce(?, uuid) WHERE id = ?"),
      ftsInsert: p("INSERT INTO items_fts(rowid, text) VALUES (?, ?)"),
      ftsDelete: p("INSERT INTO items_fts(items_fts, rowid, text) VALUES ('delete', ?, ?)"),
      usageGet: p("SELECT conv, model, input, output, cache_5m, cache_1h, cache_read FROM usage WHERE message_id = ?"),
      usageInsert: p(
        "INSERT INTO usage(message_id, conv, file, model, at, sidechain, input, output, cache_5m, cache_1h, cache_read) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
      ),
      usageUpdate: p("UPDATE usage SET input=?, output=?, cache_5m=?, cache_1h=?, cache_read=? WHERE message_id=?"),
      convUsageAdd: p(
        `INSERT INTO conv_usage(conv, model, messages, input, output, cache_5m, cache_1h, cache_read) VALUES (?,?,?,?,?,?,?,?)
         ON CONFLICT(conv, model) DO UPDATE SET messages=messages+excluded.messages, input=input+excluded.input,
           output=output+excluded.output, cache_5m=cache_5m+excluded.cache_5m, cache_1h=cache_1h+excluded.cache_1h,
           cache_read=cache_read+excluded.cache_read`,
      ),
      leafConv: p("SELECT conv FROM items WHERE uuid = ? LIMIT 1"),
      setSummary: p("UPDATE conversations SET summary = ? WHERE id = ?"),
      pendingPut: p("INSERT OR REPLACE INTO pending_summaries(leaf_uuid, summary) VALUES (?, ?)"),
      pendingGet: p("SELECT summary FROM pending_summaries WHERE leaf_uuid = ?"),
      pendingAll: p("SELECT leaf_uuid, summary FROM pending_summaries"),
      pendingDel: p("DELETE FROM pending_summaries WHERE leaf_uuid = ?"),
    };
  }

  /** The conversation for a Claude session id, created when first seen. */
  conversation(claudeSessionId: string, project: string): ConvState {
    const found = this.st.convBySid!.get(claudeSessionId);
    const id = found ? num(found.id) : num(this.st.convInsert!.run(claudeSessionId, project).lastInsertRowid);
    return this.load(id);
  }

  load(id: number): ConvState {
    const cached = this.convs.get(id);
    if (cached) return cached;
    const r: Row = this.st.convLoad!.get(id) ?? {};
    const last = this.st.lastItem!.get(id);
    const c: ConvState = {
      id,
      seq: last ? num(last.seq) : 0,
      last: last
        ? { id: num(last.id), msgId: strOrNull(last.msg_id), text: String(last.text), tools: strOrNull(last.tools) }
        : null,
      pending: null,
      cwd: strOrNull(r.cwd),
      customTitle: strOrNull(r.custom_title),
      firstPrompt: strOrNull(r.first_prompt),
      firstAt: numOrNull(r.first_at),
      lastAt: numOrNull(r.last_at),
      turns: num(r.turns),
      items: num(r.items),
      size: num(r.size),
      models: new Set(
        String(r.models ?? "")
          .split(",")
          .filter(Boolean),
      ),
    };
    this.convs.set(id, c);
    return c;
  }

  /** Applies one parsed line of a conversation's own transcript (subagent: usage only). */
  apply(c: ConvState, fileId: number, p: ParsedLine, subagent: boolean): void {
    if (p.usage) this.usage(c, fileId, p.usage);
    if (subagent) return;
    if (p.at !== undefined) {
      if (c.firstAt === null || p.at < c.firstAt) c.firstAt = p.at;
      if (c.lastAt === null || p.at > c.lastAt) c.lastAt = p.at;
    }
    if (p.cwd && !c.cwd) c.cwd = p.cwd;
    if (p.customTitle) c.customTitle = p.customTitle;
    if (p.summary) this.summary(p.summary.leafUuid, p.summary.text);
    if (p.item) this.item(c, p.item, p.at ?? null, p.prompt);
  }

  /**
   * A user prompt or an assistant message. The newest item of a conversation stays in memory until the
   * next one (or flush) so the several lines of a streamed message are indexed once, not once per line.
   */
  private item(c: ConvState, it: LineItem, at: number | null, prompt: boolean): void {
    const p = c.pending;
    if (it.role === "assistant" && it.msgId && p && p.role === "assistant" && p.msgId === it.msgId) {
      p.text = p.text && it.text ? `${p.text}\n${it.text}` : p.text || it.text;
      p.tools.push(...it.tools);
      if (it.uuid) p.uuid = it.uuid;
      return;
    }
    const last = c.last;
    if (!p && it.role === "assistant" && it.msgId && last && last.msgId === it.msgId) {
      // The rest of a streamed message whose first lines were written by an earlier batch.
      const text = last.text && it.text ? `${last.text}\n${it.text}` : last.text || it.text;
      const merged = it.tools.length
        ? JSON.stringify([...(last.tools ? (JSON.parse(last.tools) as unknown[]) : []), ...it.tools])
        : last.tools;
      if (last.text) this.st.ftsDelete!.run(last.id, last.text);
      this.st.itemUpdate!.run(text, merged, it.uuid ?? null, last.id);
      if (text) this.st.ftsInsert!.run(last.id, text);
      c.last = { id: last.id, msgId: last.msgId, text, tools: merged };
      return;
    }
    this.writePending(c);
    c.pending = { ...it, tools: [...it.tools], at, prompt };
  }

  private writePending(c: ConvState): void {
    const it = c.pending;
    if (!it) return;
    c.pending = null;
    const tools = it.tools.length ? JSON.stringify(it.tools) : null;
    c.seq += 1;
    const id = num(
      this.st.itemInsert!.run(c.id, c.seq, it.role, it.text, tools, it.at, it.uuid ?? null, it.msgId ?? null).lastInsertRowid,
    );
    if (it.text) this.st.ftsInsert!.run(id, it.text);
    c.last = { id, msgId: it.msgId ?? null, text: it.text, tools };
    c.items += 1;
    if (it.prompt) {
      c.turns += 1;
      if (!c.firstPrompt) c.firstPrompt = titleFromPrompt(it.text) ?? null;
    }
    if (it.uuid && this.st.pendingGet!.get(it.uuid)) this.newPending.push(it.uuid);
  }

  /** Each API message once, by id: repeated lines keep the largest value of each field. */
  private usage(c: ConvState, fileId: number, mu: MessageUsage): void {
    const u = mu.usage;
    const fields = [
      u.input_tokens,
      u.output_tokens,
      u.cache_creation_5m_input_tokens,
      u.cache_creation_1h_input_tokens,
      u.cache_read_input_tokens,
    ];
    const old = this.st.usageGet!.get(mu.message_id);
    if (!old) {
      const at = mu.timestamp ? Date.parse(mu.timestamp) : NaN;
      this.st.usageInsert!.run(
        mu.message_id,
        c.id,
        fileId,
        mu.model,
        Number.isFinite(at) ? at : null,
        mu.sidechain ? 1 : 0,
        ...fields,
      );
      this.st.convUsageAdd!.run(c.id, mu.model, 1, ...fields);
      c.models.add(mu.model);
      return;
    }
    const prev = [old.input, old.output, old.cache_5m, old.cache_1h, old.cache_read].map(num);
    const next = fields.map((v, i) => Math.max(v, prev[i]!));
    if (next.every((v, i) => v === prev[i])) return;
    this.st.usageUpdate!.run(...next, mu.message_id);
    this.st.convUsageAdd!.run(num(old.conv), String(old.model), 0, ...next.map((v, i) => v - prev[i]!));
  }

  private summary(leafUuid: string, text: string): void {
    const hit = this.st.leafConv!.get(leafUuid);
    if (hit) this.st.setSummary!.run(text, num(hit.conv));
    else {
      this.st.pendingPut!.run(leafUuid, text);
      this.newPending.push(leafUuid);
    }
  }

  /** Attaches summaries whose leaf message has been indexed since (all pending ones when `all`). */
  resolveSummaries(all = false): void {
    for (const c of this.convs.values()) this.writePending(c);
    const leaves = all ? this.st.pendingAll!.all().map((r) => String(r.leaf_uuid)) : this.newPending;
    this.newPending = [];
    for (const leaf of new Set(leaves)) {
      const hit = this.st.leafConv!.get(leaf);
      const s = this.st.pendingGet!.get(leaf);
      if (!hit || !s) continue;
      this.st.setSummary!.run(String(s.summary), num(hit.conv));
      this.st.pendingDel!.run(leaf);
    }
  }

  /** Writes every conversation touched since the last flush. */
  flush(): void {
    for (const c of this.convs.values()) {
      this.writePending(c);
      this.st.convSave!.run(
        c.cwd,
        c.customTitle,
        c.firstPrompt,
        c.firstAt,
        c.lastAt,
        c.turns,
        c.items,
        c.size,
        [...c.models].join(","),
        c.id,
      );
    }
    this.convs.clear();
  }

  /** Forgets what one file contributed (it was replaced or truncated, or it is gone). */
  forgetFile(fileId: number, convId: number, subagent: boolean): void {
    this.flush();
    const db = this.db;
    if (!subagent) {
      for (const r of db.prepare("SELECT id, text FROM items WHERE conv = ? AND text != ''").iterate(convId)) {
        this.st.ftsDelete!.run(num(r.id), String(r.text));
      }
      db.prepare("DELETE FROM items WHERE conv = ?").run(convId);
      db.prepare(
        "UPDATE conversations SET cwd=NULL, summary=NULL, custom_title=NULL, first_prompt=NULL, first_at=NULL, last_at=NULL, " +
          "turns=0, items=0, size=0 WHERE id=?",
      ).run(convId);
    }
    db.prepare("DELETE FROM usage WHERE file = ?").run(fileId);
    db.prepare("DELETE FROM conv_usage WHERE conv = ?").run(convId);
    db.prepare(
      `INSERT INTO conv_usage(conv, model, messages, input, output, cache_5m, cache_1h, cache_read)
       SELECT conv, model, count(*), sum(input), sum(output), sum(cache_5m), sum(cache_1h), sum(cache_read) FROM usage WHERE conv = ? GROUP BY model`,
    ).run(convId);
    const models = db.prepare("SELECT group_concat(model) AS m FROM conv_usage WHERE conv = ?").get(convId);
    db.prepare("UPDATE conversations SET models = ? WHERE id = ?").run(String(models?.m ?? ""), convId);
  }

  /** Drops a conversation that has no transcript left. */
  dropConversation(convId: number): void {
    if (this.db.prepare("SELECT 1 FROM files WHERE conv = ?").get(convId)) return;
    this.db.prepare("DELETE FROM conv_usage WHERE conv = ?").run(convId);
    this.db.prepare("DELETE FROM conversations WHERE id = ?").run(convId);
  }
}

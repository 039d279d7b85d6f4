/**
 * The server's own execution history: one record per turn it drove (prompt, response, times, outcome).
 * Kept in `<stateDir>/executions.sqlite`, apart from the transcript index: the index can be deleted and
 * rebuilt from Claude's transcripts, this cannot. Clearing it never touches Claude's transcripts.
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ensurePrivateFile, SQLITE_FILES } from "../util/private-file.js";
import type { Usage } from "../claude/usage.js";
import { iso, num, strOrNull, type Row } from "./rows.js";

import { EXECUTION_OUTCOMES, historyUsage } from "../api/history.js";

export const OUTCOMES = EXECUTION_OUTCOMES;
export type Outcome = (typeof OUTCOMES)[number];

export interface NewExecution {
  session_id: string;
  claude_session_id?: string;
  prompt: string;
  response?: string;
  started_at: Date | string;
  ended_at: Date | string;
  outcome: Outcome;
  error?: string;
  usage?: Usage;
  cost_usd?: number | null;
}

export interface Execution {
  id: number;
  session_id: string;
  claude_session_id: string | null;
  prompt: string;
  response: string | null;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  outcome: Outcome;
  error: string | null;
  usage: Usage | null;
  cost_usd: number | null;
}

/** Prompts and responses longer than this are stored cut (the transcript keeps them whole). */
export const MAX_STORED_CHARS = 100_000;

const DDL = `CREATE TABLE IF NOT EXISTS executions(
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  claude_session_id TEXT,
  prompt TEXT NOT NULL,
  response TEXT,
  started_at INTEGER NOT NULL,
  ended_at INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT,
  usage TEXT,
  cost_usd REAL
);
CREATE INDEX IF NOT EXISTS executions_session ON executions(session_id, id);`;

const ms = (d: Date | string): number => {
  const v = typeof d === "string" ? Date.parse(d) : d.getTime();
  if (!Number.isFinite(v)) throw new Error(`not a time: ${String(d)}`);
  return v;
};
const cut = (s: string) => (s.length > MAX_STORED_CHARS ? s.slice(0, MAX_STORED_CHARS) : s);
const isOutcome = (v: unknown): v is Outcome => typeof v === "string" && (OUTCOMES as readonly string[]).includes(v);

/** The stored usage has the tool's shape (src/api/history.ts). */
const usageJson = historyUsage;

function parseUsageJson(v: unknown): Usage | null {
  if (typeof v !== "string") return null;
  try {
    const r = usageJson.safeParse(JSON.parse(v));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

function toExecution(r: Row): Execution {
  const started = num(r.started_at);
  const ended = num(r.ended_at);
  return {
    id: num(r.id),
    session_id: String(r.session_id),
    claude_session_id: strOrNull(r.claude_session_id),
    prompt: String(r.prompt),
    response: strOrNull(r.response),
    started_at: iso(started) ?? "",
    ended_at: iso(ended) ?? "",
    duration_ms: Math.max(0, ended - started),
    outcome: isOutcome(r.outcome) ? r.outcome : "error",
    error: strOrNull(r.error),
    usage: parseUsageJson(r.usage),
    cost_usd: r.cost_usd === null || r.cost_usd === undefined ? null : num(r.cost_usd),
  };
}

export class ExecutionLog {
  private readonly db: DatabaseSync;

  constructor(stateDir: string) {
    ensurePrivateFile(join(stateDir, "executions.sqlite"), SQLITE_FILES);
    this.db = new DatabaseSync(join(stateDir, "executions.sqlite"));
    this.db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=2000;");
    this.db.exec(DDL);
  }

  /** Records one finished turn (call at turn end, whatever the outcome). */
  record(e: NewExecution): Execution {
    const id = this.db
      .prepare(
        "INSERT INTO executions(session_id, claude_session_id, prompt, response, started_at, ended_at, outcome, error, usage, cost_usd) VALUES (?,?,?,?,?,?,?,?,?,?)",
      )
      .run(
        e.session_id,
        e.claude_session_id ?? null,
        cut(e.prompt),
        e.response === undefined ? null : cut(e.response),
        ms(e.started_at),
        ms(e.ended_at),
        e.outcome,
        e.error ?? null,
        e.usage ? JSON.stringify(e.usage) : null,
        e.cost_usd ?? null,
      ).lastInsertRowid;
    const row = this.db.prepare("SELECT * FROM executions WHERE id = ?").get(id);
    if (!row) throw new Error("execution record vanished after insert");
    return toExecution(row);
  }

  /** Newest first; `session_id` narrows to one session. */
  list(args: { limit?: number; session_id?: string } = {}): { executions: Execution[]; total_count: number } {
    const limit = Math.max(1, Math.min(args.limit ?? 50, 10_000));
    const where = args.session_id === undefined ? "" : "WHERE session_id = ?";
    const params = args.session_id === undefined ? [] : [args.session_id];
    const rows = this.db.prepare(`SELECT * FROM executions ${where} ORDER BY id DESC LIMIT ?`).all(...params, limit);
    const total = num(this.db.prepare(`SELECT count(*) AS n FROM executions ${where}`).get(...params)?.n);
    return { executions: rows.map(toExecution), total_count: total };
  }

  /** Deletes records (all, or one session's) and returns how many. */
  clear(args: { session_id?: string } = {}): number {
    const r =
      args.session_id === undefined
        ? this.db.prepare("DELETE FROM executions").run()
        : this.db.prepare("DELETE FROM executions WHERE session_id = ?").run(args.session_id);
    return num(r.changes);
  }

  close(): void {
    this.db.close();
  }
}

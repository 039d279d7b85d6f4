/**
 * The server's own execution history: one record per turn it drove (prompt, response, times, outcome).
 * Kept in `<stateDir>/executions.sqlite`, apart from the transcript index: the index can be deleted and
 * rebuilt from Claude's transcripts, this cannot. Clearing it never touches Claude's transcripts.
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ensurePrivateFile, SQLITE_FILES } from "../util/fs/private-file.js";
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
  /** false (or left out): a model of the turn has no price, or its figures were not read: cost_usd is a lower bound or null. */
  cost_complete?: boolean;
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
  cost_complete: boolean;
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
  cost_usd REAL,
  cost_complete INTEGER
);
CREATE INDEX IF NOT EXISTS executions_session ON executions(session_id, id);`;

/** Outcomes of a turn's end (the others are waits that ended first); a turn that ended in error is one of ERRORS. */
const TURN_ENDS = ["completed", "failed", "interrupted", "died", "start_failed", "error"];
const ERRORS = new Set(["failed", "died", "start_failed", "error"]);

/** Retention: the newest `keep` records, none older than `maxAgeMs` (0: no age limit). */
export interface Retention {
  keep: number;
  maxAgeMs: number;
}
export const DEFAULT_RETENTION: Retention = { keep: 10_000, maxAgeMs: 0 };

/** Per-session figures over the recorded turns (waits that timed out or were cancelled are not turns). */
export interface SessionMetrics {
  turns: number;
  avg_turn_ms: number | null;
  p95_turn_ms: number | null;
  error_rate: number | null;
  usage: Usage;
  cost_usd: number | null;
  cost_complete: boolean;
}

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
    // Rows from before the column: complete when they have a cost (the partial-sum case was not told apart then).
    cost_complete:
      r.cost_complete === null || r.cost_complete === undefined
        ? r.cost_usd !== null && r.cost_usd !== undefined
        : num(r.cost_complete) === 1,
  };
}

export class ExecutionLog {
  private readonly db: DatabaseSync;

  constructor(
    stateDir: string,
    /** null: a reader (the CLI) that never prunes. */
    private readonly retention: Retention | null = DEFAULT_RETENTION,
  ) {
    ensurePrivateFile(join(stateDir, "executions.sqlite"), SQLITE_FILES);
    this.db = new DatabaseSync(join(stateDir, "executions.sqlite"));
    this.db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=2000;");
    this.db.exec(DDL);
    // A file from before cost_complete: the column is added (old rows read it as unknown).
    const cols = this.db
      .prepare("PRAGMA table_info(executions)")
      .all()
      .map((c) => String(c.name));
    if (!cols.includes("cost_complete")) this.db.exec("ALTER TABLE executions ADD COLUMN cost_complete INTEGER");
    this.db.exec("CREATE INDEX IF NOT EXISTS executions_ended ON executions(ended_at)");
    this.prune();
  }

  /** Drops records past the retention: beyond the newest `keep`, and ended longer than `maxAgeMs` ago. */
  prune(now = Date.now()): number {
    if (!this.retention) return 0;
    let n = num(
      this.db
        .prepare("DELETE FROM executions WHERE id <= (SELECT id FROM executions ORDER BY id DESC LIMIT 1 OFFSET ?)")
        .run(this.retention.keep).changes,
    );
    if (this.retention.maxAgeMs > 0)
      n += num(this.db.prepare("DELETE FROM executions WHERE ended_at < ?").run(now - this.retention.maxAgeMs).changes);
    return n;
  }

  /** Turns, average and p95 turn time, error rate, tokens and cost of each session named (or every session). */
  metrics(sessionIds?: string[]): Map<string, SessionMetrics> {
    const out = new Map<string, SessionMetrics>();
    if (sessionIds && sessionIds.length === 0) return out;
    const marks = TURN_ENDS.map(() => "?").join(",");
    const where = sessionIds ? `AND session_id IN (${sessionIds.map(() => "?").join(",")})` : "";
    const rows = this.db
      .prepare(
        `SELECT session_id, ended_at - started_at AS ms, outcome, usage, cost_usd, cost_complete FROM executions WHERE ` +
          `outcome IN (${marks}) ${where} ORDER BY session_id, ms`,
      )
      .all(...TURN_ENDS, ...(sessionIds ?? []));
    const groups = new Map<string, Row[]>();
    for (const r of rows) groups.set(String(r.session_id), [...(groups.get(String(r.session_id)) ?? []), r]);
    for (const [id, list] of groups) {
      const ms = list.map((r) => Math.max(0, num(r.ms)));
      const usage = {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_creation_5m_input_tokens: 0,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: 0,
      };
      let cost = 0;
      let priced = 0;
      let complete = true;
      for (const r of list) {
        const u = parseUsageJson(r.usage);
        if (u) for (const k of Object.keys(usage) as (keyof Usage)[]) usage[k] += u[k];
        if (r.cost_usd !== null && r.cost_usd !== undefined) ((cost += num(r.cost_usd)), priced++);
        // A turn with tokens and no (complete) price makes the sum a lower bound.
        if (u && (r.cost_usd === null || r.cost_usd === undefined || num(r.cost_complete ?? 1) === 0)) complete = false;
      }
      out.set(id, {
        turns: list.length,
        avg_turn_ms: Math.round(ms.reduce((a, b) => a + b, 0) / ms.length),
        // Nearest rank: the smallest duration at or above 95 % of the turns.
        p95_turn_ms: ms[Math.max(0, Math.ceil(0.95 * ms.length) - 1)] ?? null,
        error_rate: list.filter((r) => ERRORS.has(String(r.outcome))).length / list.length,
        usage,
        cost_usd: priced > 0 || complete ? Math.round(cost * 1e6) / 1e6 : null,
        cost_complete: complete,
      });
    }
    return out;
  }

  /** Records one finished turn (call at turn end, whatever the outcome). */
  record(e: NewExecution): Execution {
    const id = this.db
      .prepare(
        "INSERT INTO executions(session_id, claude_session_id, prompt, response, started_at, ended_at, outcome, error, " +
          "usage, cost_usd, cost_complete) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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
        e.cost_complete ? 1 : 0,
      ).lastInsertRowid;
    const row = this.db.prepare("SELECT * FROM executions WHERE id = ?").get(id);
    if (!row) throw new Error("execution record vanished after insert");
    this.prune();
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

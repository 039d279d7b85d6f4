/**
 * The transcript index: one SQLite file under the state directory. It holds nothing that cannot be read
 * again from Claude's transcripts, so a missing, corrupt or older-schema file is simply rebuilt.
 */
import type { DatabaseSync } from "node:sqlite";

export const SCHEMA_VERSION = "3";

/**
 * Every column of \`conversations\`, newest first: listing all conversations reads this index's few densely packed
 * pages instead of one table page per conversation (the rows are spread over the file between the items).
 */
const LIST_INDEX =
  `CREATE INDEX IF NOT EXISTS conv_list ON conversations(last_at DESC, id DESC, claude_session_id, project, cwd, ` +
  `summary, custom_title, first_prompt, first_at, turns, items, size, models);`;

export const DDL = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  conv INTEGER NOT NULL,
  subagent INTEGER NOT NULL,
  ino TEXT NOT NULL,
  size INTEGER NOT NULL,
  offset INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS conversations(
  id INTEGER PRIMARY KEY,
  claude_session_id TEXT NOT NULL UNIQUE,
  project TEXT NOT NULL,
  cwd TEXT,
  summary TEXT,
  custom_title TEXT,
  first_prompt TEXT,
  first_at INTEGER,
  last_at INTEGER,
  turns INTEGER NOT NULL DEFAULT 0,
  items INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  models TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS conv_last ON conversations(last_at, id);
${LIST_INDEX}
CREATE INDEX IF NOT EXISTS conv_cwd ON conversations(cwd, last_at);
CREATE TABLE IF NOT EXISTS items(
  id INTEGER PRIMARY KEY,
  conv INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  text TEXT NOT NULL,
  tools TEXT,
  at INTEGER,
  uuid TEXT,
  msg_id TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS items_conv_seq ON items(conv, seq);
CREATE INDEX IF NOT EXISTS items_uuid ON items(uuid);
CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5(text, content='items', content_rowid='id', tokenize='trigram');
CREATE TABLE IF NOT EXISTS usage(
  message_id TEXT PRIMARY KEY,
  conv INTEGER NOT NULL,
  file INTEGER NOT NULL,
  model TEXT NOT NULL,
  at INTEGER,
  sidechain INTEGER NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_5m INTEGER NOT NULL,
  cache_1h INTEGER NOT NULL,
  cache_read INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_conv ON usage(conv);
CREATE INDEX IF NOT EXISTS usage_at ON usage(at);
CREATE TABLE IF NOT EXISTS conv_usage(
  conv INTEGER NOT NULL,
  model TEXT NOT NULL,
  messages INTEGER NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_5m INTEGER NOT NULL,
  cache_1h INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  PRIMARY KEY(conv, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_summaries(leaf_uuid TEXT PRIMARY KEY, summary TEXT NOT NULL) WITHOUT ROWID;
`;

/** Pragmas for every connection: WAL so readers never wait for the indexer, and a short busy wait. */
export function tune(db: DatabaseSync): void {
  db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=2000; PRAGMA cache_size=-16000;");
}

/** Creates the tables in an empty file; false when the file holds another schema version. */
export function ensureSchema(db: DatabaseSync): boolean {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").get();
  if (hasMeta) {
    const row = db.prepare("SELECT value FROM meta WHERE key='schema'").get();
    const ok = row !== undefined && row.value === SCHEMA_VERSION;
    if (ok) db.exec(LIST_INDEX); // an index made before conv_list existed gets it here, once
    return ok;
  }
  const any = db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
  if (any && Number(any.n) > 0) return false;
  db.exec("BEGIN");
  db.exec(DDL);
  db.prepare("INSERT INTO meta(key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
  db.exec("COMMIT");
  return true;
}

/** SQLITE_CORRUPT (11) or SQLITE_NOTADB (26), also as extended codes. */
export function isCorruption(err: unknown): boolean {
  if (err === null || typeof err !== "object") return false;
  const code = (err as { errcode?: unknown }).errcode;
  if (typeof code === "number") {
    const primary = code & 0xff;
    return primary === 11 || primary === 26;
  }
  const msg = err instanceof Error ? err.message : "";
  return /malformed|not a database|file is encrypted/i.test(msg);
}

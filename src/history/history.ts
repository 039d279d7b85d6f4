/**
 * The History service: the transcript index under the state directory, kept up to date in the
 * background, answering queries at once from whatever is indexed. Every answer says `indexing: true`
 * while a full build or rebuild is under way (or has not finished yet), so a caller knows it may be partial.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SessionError } from "../core/errors.js";
import type { SyncStats } from "./indexer.js";
import {
  emptyUsageReport,
  getConversation,
  listConversations,
  usageReport,
  type ConversationInfo,
  type ConversationPage,
  type GetArgs,
  type ListArgs,
  type UsageArgs,
  type UsageRow,
} from "./queries.js";
import { InlineRunner, OnDemandWorkerRunner, workerScript, type IndexRunner } from "./runner.js";
import { isCorruption, SCHEMA_VERSION, tune } from "./schema.js";
import { registerSearchFunctions, searchConversations, type SearchArgs, type SearchResult } from "./search.js";

export interface HistoryOptions {
  /** The server's state directory; the index is `<stateDir>/history.sqlite`. */
  stateDir: string;
  /** Claude's config directory (CLAUDE_CONFIG_DIR or ~/.claude); transcripts are under `<configDir>/projects`. */
  configDir: string;
  /** "worker" (a worker thread; needs the built package), "inline" (batches on this thread), "auto" (default). */
  mode?: "worker" | "inline" | "auto";
  /** Start a full sync when opened (default false: a server syncs when a query first needs the index, see freshen). */
  syncOnOpen?: boolean;
}

/** A query finds the index fresh when its last full sync finished less than this long ago. */
const FRESH_MS = 5000;

export interface IndexState {
  /** A full build or rebuild is running or has not finished yet: answers may be partial. */
  indexing: boolean;
  /** When the last full sync finished (null: never since the index was created). */
  complete_at: string | null;
  files_read?: number;
  bytes_read?: number;
}

/** The configuration directory Claude Code uses: CLAUDE_CONFIG_DIR, else $HOME/.claude. */
export function claudeConfigDir(env: NodeJS.ProcessEnv, home: string): string {
  return env.CLAUDE_CONFIG_DIR || join(home, ".claude");
}

export class History {
  readonly dbPath: string;
  private readonly runner: IndexRunner;
  private db: DatabaseSync | undefined;
  private fullSyncs = 0;
  private progress: SyncStats | undefined;
  private fullSync: Promise<SyncStats> | undefined;
  private pendingPaths = new Set<string>();
  private pathSync: Promise<SyncStats> | undefined;
  /** performance.now() when the last full sync ended (0: none by this process). */
  private syncedAt = 0;

  constructor(readonly opts: HistoryOptions) {
    this.dbPath = join(opts.stateDir, "history.sqlite");
    const events = { onReset: () => this.closeReader(), onProgress: (s: SyncStats) => (this.progress = s) };
    const mode = opts.mode ?? "auto";
    const script = mode === "inline" ? undefined : workerScript();
    if (mode === "worker" && !script) throw new Error("history worker script not found: build the package (npm run build)");
    this.runner = script
      ? new OnDemandWorkerRunner(script, this.dbPath, opts.configDir, events)
      : new InlineRunner(this.dbPath, opts.configDir, events);
    if (opts.syncOnOpen ?? false) void this.sync().catch(() => undefined);
  }

  /** Reads every transcript that changed. Concurrent calls share one run. */
  sync(): Promise<SyncStats> {
    if (this.fullSync) return this.fullSync;
    this.fullSyncs++;
    const run = this.runner.sync().finally(() => {
      this.fullSyncs--;
      this.fullSync = undefined;
      this.syncedAt = performance.now();
    });
    this.fullSync = run;
    return run;
  }

  /**
   * Before a query: when the last full sync is older than FRESH_MS (or there was none), one starts in the background
   * (conversations Claude wrote outside this server, since its last look); the query waits for it at most `waitMs`
   * and otherwise answers from what is indexed, with `indexing: true`. The thread and its memory exist only for
   * servers whose clients use the history.
   */
  async freshen(waitMs: number): Promise<void> {
    let run: Promise<unknown>;
    if (this.fullSync || this.syncedAt === 0 || performance.now() - this.syncedAt >= FRESH_MS) {
      this.pendingPaths.clear(); // a full look reads them too
      run = this.sync();
    } else if (this.pendingPaths.size) {
      run = this.update([]);
    } else return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([run.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  /**
   * Transcripts that grew (a turn of this server's sessions ended): read at the next query, not now, so a server
   * whose clients never ask for the history never starts the indexer, and turns never pay for it.
   */
  noteAppended(paths: string[]): void {
    for (const p of paths) this.pendingPaths.add(p);
  }

  /**
   * Reads what was appended to the given transcripts (call at turn end with the session's transcript).
   * Paths asked for while an update runs are read together in the next one.
   */
  update(paths: string[]): Promise<SyncStats> {
    for (const p of paths) this.pendingPaths.add(p);
    if (this.pathSync) return this.pathSync.then(() => this.update([]));
    const batch = [...this.pendingPaths];
    this.pendingPaths.clear();
    if (batch.length === 0)
      return Promise.resolve({ files_seen: 0, files_read: 0, bytes_read: 0, lines: 0, files_removed: 0, rebuilt: false, ms: 0 });
    const run = this.runner.sync(batch).finally(() => (this.pathSync = undefined));
    this.pathSync = run;
    return run;
  }

  /** Deletes the index and builds it again. */
  rebuild(): Promise<SyncStats> {
    this.fullSyncs++;
    return this.runner.rebuild().finally(() => this.fullSyncs--);
  }

  state(): IndexState {
    const complete = this.read((db) => db.prepare("SELECT value FROM meta WHERE key = 'complete'").get()?.value, undefined);
    const out: IndexState = {
      indexing: this.fullSyncs > 0 || typeof complete !== "string",
      complete_at: typeof complete === "string" ? complete : null,
    };
    if (this.fullSyncs > 0 && this.progress) {
      out.files_read = this.progress.files_read;
      out.bytes_read = this.progress.bytes_read;
    }
    return out;
  }

  listConversations(
    args: ListArgs = {},
  ): { conversations: ConversationInfo[]; next_cursor: string | null; total: number } & IndexState {
    const r = this.read((db) => listConversations(db, args), { conversations: [], next_cursor: null, total: 0 });
    return { ...r, ...this.state() };
  }

  /** One conversation's items; SESSION_NOT_FOUND when it is not (yet) indexed. */
  getConversation(args: GetArgs): ConversationPage & IndexState {
    const page = this.read((db) => getConversation(db, args), undefined);
    const st = this.state();
    if (!page) {
      throw new SessionError(
        "SESSION_NOT_FOUND",
        `no conversation ${args.claude_session_id} in the transcript index${st.indexing ? " (still indexing)" : ""}`,
        {
          suggestion: "Call list_conversations or search_conversations for the ids the index knows.",
        },
      );
    }
    return { ...page, ...st };
  }

  searchConversations(args: SearchArgs): SearchResult & IndexState {
    const r = this.read((db) => searchConversations(db, args), { results: [], terms: [], examined: 0, more_matches: false });
    return { ...r, ...this.state() };
  }

  usage(args: UsageArgs = {}): { rows: UsageRow[]; total: UsageRow } & IndexState {
    const r = this.read((db) => usageReport(db, args), emptyUsageReport());
    return { ...r, ...this.state() };
  }

  async close(): Promise<void> {
    this.closeReader();
    await this.runner.close();
  }

  /** Runs a read on this thread's connection; an index not there yet answers `empty`, a corrupt one is rebuilt. */
  private read<T>(fn: (db: DatabaseSync) => T, empty: T): T {
    const db = this.reader();
    if (!db) return empty;
    try {
      return fn(db);
    } catch (e) {
      if (e instanceof SessionError) throw e;
      if (isCorruption(e)) {
        this.closeReader();
        void this.rebuild().catch(() => undefined);
        return empty;
      }
      if (e instanceof Error && /no such table/.test(e.message)) return empty;
      throw e;
    }
  }

  private reader(): DatabaseSync | undefined {
    if (this.db) return this.db;
    if (!existsSync(this.dbPath)) return undefined;
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(this.dbPath);
      tune(db);
      const v = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get();
      if (!v || v.value !== SCHEMA_VERSION) {
        db.close();
        return undefined; // the indexer is creating or replacing it
      }
      registerSearchFunctions(db);
      this.db = db;
      return db;
    } catch {
      db?.close();
      return undefined;
    }
  }

  private closeReader(): void {
    try {
      this.db?.close();
    } catch {
      // closing a connection to a deleted file can fail; it is dropped either way
    }
    this.db = undefined;
  }
}

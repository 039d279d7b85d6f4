/**
 * What the history tools and the CLI talk to: the transcript index (History) and this server's execution
 * log, typed with src/api. The index is built in the background and never on a caller's path: an answer
 * while it builds says `indexing: true`. Conversations this server runs carry their `session_id`.
 */
import type * as api from "../api/index.js";
import type { Usage } from "../claude/usage.js";
import { ExecutionLog, type NewExecution, type Retention, type SessionMetrics } from "./executions.js";
import { History, type HistoryOptions } from "./history.js";
import type { UsageArgs, UsageRow } from "./queries.js";

export interface HistoryServiceOptions extends HistoryOptions {
  /** The execution history's retention (CLAUDE_SESSIONS_HISTORY_KEEP, CLAUDE_SESSIONS_HISTORY_MAX_AGE_DAYS). */
  retention?: Retention;
  /** claude_session_id → the session of this server that runs or ran it. */
  managed?: () => Promise<Map<string, string>>;
}

/** How long a query waits for the index to catch up with transcripts written elsewhere before it answers. */
const FRESHEN_WAIT_MS = 150;

export class HistoryService {
  readonly index: History;
  private executionsLog: ExecutionLog | undefined;

  constructor(private readonly o: HistoryServiceOptions) {
    this.index = new History(o);
  }

  /** Opened on first use: a server that never records a turn never creates the file. */
  private get executions(): ExecutionLog {
    return (this.executionsLog ??= new ExecutionLog(this.o.stateDir, this.o.retention));
  }

  private async withManaged<T extends { claude_session_id: string; session_id?: string }>(items: T[]): Promise<T[]> {
    if (!this.o.managed || items.length === 0) return items;
    const m = await this.o.managed().catch(() => new Map<string, string>());
    return items.map((c) => {
      const sid = m.get(c.claude_session_id);
      return sid ? { ...c, session_id: sid } : c;
    });
  }

  async listConversations(args: api.ListConversationsInput): Promise<api.ListConversationsOutput> {
    await this.index.freshen(FRESHEN_WAIT_MS);
    const r = this.index.listConversations(args);
    return { ...r, conversations: await this.withManaged(r.conversations) };
  }

  async getConversation(args: api.GetConversationInput): Promise<api.GetConversationOutput> {
    await this.index.freshen(FRESHEN_WAIT_MS);
    const r = this.index.getConversation(args);
    const [conversation] = await this.withManaged([r.conversation]);
    return { ...r, conversation: conversation ?? r.conversation };
  }

  async searchConversations(args: api.SearchConversationsInput): Promise<api.SearchConversationsOutput> {
    await this.index.freshen(FRESHEN_WAIT_MS);
    return this.index.searchConversations(args);
  }

  getExecutions(args: api.GetExecutionsInput): api.GetExecutionsOutput {
    return this.executions.list(args);
  }

  clearExecutions(args: api.ClearExecutionsInput): api.ClearExecutionsOutput {
    return { cleared_count: this.executions.clear(args) };
  }

  async usage(args: UsageArgs): Promise<{ rows: UsageRow[]; total: UsageRow; indexing: boolean }> {
    await this.index.freshen(FRESHEN_WAIT_MS);
    return this.index.usage(args);
  }

  /** Records a turn that ended (never throws: the history must not break a turn). */
  /** Per-session turn metrics from the execution history (empty when it cannot be read). */
  metrics(sessionIds?: string[]): Map<string, SessionMetrics> {
    try {
      return this.executions.metrics(sessionIds);
    } catch {
      return new Map();
    }
  }

  recordTurn(e: NewExecution): void {
    try {
      this.executions.record(e);
    } catch {
      // a full disk or a locked file loses one record, not the turn
    }
  }

  /** These transcripts grew: the index reads the new bytes before the next query answers. */
  noticeAppend(paths: string[]): void {
    this.index.noteAppended(paths);
  }

  async close(): Promise<void> {
    this.executionsLog?.close();
    this.executionsLog = undefined;
    await this.index.close();
  }
}

export type { Usage };

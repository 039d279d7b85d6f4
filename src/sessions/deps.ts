/** What every part of the session layer works with: configuration, store, runners, the registry. */
import type { SendOutput } from "../api/index.js";
import type { ScriptPaths } from "../claude/scripts.js";
import type { Config } from "../config.js";
import { SessionError } from "../core/errors.js";
import type { BackendKind } from "../core/events.js";
import type { Runner } from "../runners/runner.js";
import type { HistoryService } from "../history/service.js";
import type { AuditLog } from "../store/audit.js";
import type { Store } from "../store/store.js";
import type { Logger } from "../util/log.js";
import type { Ledger } from "./spend/cost.js";
import type { Registry } from "./registry.js";
import type { WarmPool } from "./launch/warm-pool.js";

export type { Runner };

/** A turn's usage and cost with the session's totals, read after its send_message returned (`usage_pending`). */
export type TurnUsage = { turn: number } & Pick<
  SendOutput,
  | "usage"
  | "model_usage"
  | "cost_usd"
  | "cost_complete"
  | "session_usage"
  | "session_cost_usd"
  | "session_cost_complete"
  | "session_turns"
>;

export interface Deps {
  cfg: Config;
  store: Store;
  log: Logger;
  scripts: ScriptPaths;
  registry: Registry;
  runners: Partial<Record<BackendKind, Runner>>;
  /** Why a kind of session cannot run on this server (e.g. TMUX_NOT_FOUND), for the error a caller gets. */
  unavailable: Partial<Record<BackendKind, SessionError>>;
  /** The kind used when a call names none. */
  defaultKind: BackendKind;
  /** resume_session calls under way in this process, by session id: a second one gets the first one's result. */
  resuming: Map<string, Promise<unknown>>;
  /** Sessions a time limit ended, with the reason: their waiters get SESSION_DEAD saying it (cleared on resume). */
  endReasons: Map<string, string>;
  /** Turns under way and being settled (usage and cost from the transcript). */
  ledger: Ledger;
  /** run_task's ready spares (CLAUDE_SESSIONS_WARM_POOL), made on first use. */
  pool?: WarmPool;
  /** The audit log (one per process): every transport's state-changing calls and the server's own actions. */
  audit: AuditLog;
  /** Told when the usage of a turn whose send_message returned before it (usage_pending) has been read. */
  onTurnUsage?: (id: string, usage: TurnUsage) => void;
  /** The transcript index and the execution history (absent in a bare service). */
  history?: HistoryService | undefined;
}

/** The runners of this server. */
export function allRunners(d: Deps): Runner[] {
  return Object.values(d.runners);
}

export function runnerOf(d: Deps, kind: BackendKind): Runner {
  const r = d.runners[kind];
  if (r) return r;
  throw (
    d.unavailable[kind] ??
    new SessionError("INVALID_ARGUMENT", `the ${kind} backend is not available on this server.`, {
      suggestion: `Use one of: ${Object.keys(d.runners).join(", ") || "(none)"}.`,
    })
  );
}

/**
 * The stored form of a session (state.json). Field names follow the spec's SessionState, plus what
 * resume and adoption need (claude_session_id, backend, tmux socket, …). Validated on every read.
 */
import { z } from "zod";
import { BACKEND_KINDS } from "../core/events.js";
import { BLOCKED_KINDS, STATUSES } from "../core/status.js";
import { StoredOptionsSchema } from "./options.js";

export const STATE_VERSION = "1.0.0";

export const PendingPermissionSchema = z.object({
  tool_name: z.string(),
  tool_input: z.unknown(),
  since: z.string().optional(),
  suggestions: z.array(z.unknown()).optional(),
});

/**
 * A session's place in its host, as the host said at the spawn (runners/host.ts `Spawned.ref`); the session layer
 * keeps it, hands it back (`Host.owns`) and shows target and pane in start results. Records of servers before it kept these as tmux_pane_id,
 * tmux_session, tmux_socket and owner_pid: the store moves them here on read (store/parse.ts migrateRecord).
 */
export const HostRefSchema = z.object({
  /** The name a person uses to reach the terminal (tmux: the session cs-<id>). */
  target: z.string().optional(),
  /** tmux: the pane id (%N). */
  pane: z.string().optional(),
  /** tmux -L / -S used for this session, so another server finds it. */
  socket: z.string().optional(),
  /** A host whose sessions live in a server process (pty, headless): that process. */
  owner_pid: z.number().int().optional(),
});
export type HostRef = z.infer<typeof HostRefSchema>;

export const SessionRecordSchema = z.object({
  session_id: z.string(),
  claude_session_id: z.string(),
  backend: z.enum(BACKEND_KINDS),
  status: z.enum(STATUSES),
  pid: z.number().int().optional(),
  /** Where its host keeps the process (the host's own words: a terminal's name, a server process); see HostRefSchema. */
  host: HostRefSchema.optional(),
  created_at: z.string(),
  started_at: z.string().optional(),
  /** When the current process (this spawn generation) started: the session deadline counts from here. */
  process_started_at: z.string().optional(),
  /** Spawn generation: +1 on every start/resume; cs:spawn and exit records carry it (older exits are ignored). */
  generation: z.number().int().optional(),
  last_active: z.string().optional(),
  killed_at: z.string().optional(),
  cwd: z.string(),
  command: z.string(),
  args: z.array(z.string()),
  doppler_project: z.string().optional(),
  doppler_config: z.string().optional(),
  /** Names only: values never reach the disk. */
  env_names: z.array(z.string()).default([]),
  team_name: z.string().optional(),
  teammate_name: z.string().optional(),
  model: z.string().optional(),
  /** The permission mode the CLI was started in (always passed explicitly; the server's default when none was asked for). */
  permission_mode: z.string().optional(),
  /** Runs in the sandbox (issue 32): resume, wake and forks run it the same way; allow_hosts is the caller's narrowing. */
  sandbox: z.object({ allow_hosts: z.array(z.string()).optional() }).optional(),
  /** `claude --version` of the binary the current process runs (read at start and resume). */
  claude_version: z.string().optional(),
  max_turns: z.number().int().optional(),
  /** The server refuses prompts once the session's cost reaches this (USD). */
  max_budget_usd: z.number().optional(),
  /** A teammate a budgeted lead started: the lead's session id, whose max_budget_usd it shares (sessions/spend/pool.ts). */
  budget_pool: z.string().optional(),
  /** The operator's account it runs under (CLAUDE_SESSIONS_ACCOUNTS): its NAME only, never its folder or key. */
  account: z.string().optional(),
  /** What it does at a usage limit, when the caller chose (start_session/resume_session `on_limit`); else the operator's. */
  on_limit: z.enum(["wait", "fail", "switch_account"]).optional(),
  /** Tokens of the whole session per model, each API message once (read from the transcript at every turn end). */
  usage_by_model: z.record(z.string(), z.record(z.string(), z.number())).optional(),
  /** How far each transcript (the conversation's and its sub-agents') has been counted into usage_by_model. */
  usage_files: z.record(z.string(), z.number().int()).optional(),
  turn_count: z.number().int().default(0),
  last_message: z.string().optional(),
  last_response: z.string().optional(),
  last_error: z.string().optional(),
  pending_permission: PendingPermissionSchema.optional(),
  /** Claude Code's own "needs your input" notice (agent_needs_input), while it stands. */
  needs_input: z.string().optional(),
  /** Sandbox violations counted in its events log (refused connections, sentinels sent elsewhere). */
  sandbox_violations: z.number().int().optional(),
  /** A team member's request_shutdown reason, while its process runs (a client approves with kill_session). */
  shutdown_requested: z.string().optional(),
  /** The last turn hit a usage or rate limit (issue 33); shown as status `limited` while the session is idle or hibernated. */
  limit: z
    .object({
      resets_at: z.string(),
      limit_kind: z.string(),
      reset_known: z.boolean(),
      message: z.string(),
      wake_at: z.string().optional(),
      account: z.string().optional(),
    })
    .optional(),
  /** The screen that holds the session (status blocked). */
  blocked: z
    .object({ kind: z.enum(BLOCKED_KINDS), text: z.string(), choices: z.array(z.string()), since: z.string().optional() })
    .optional(),
  exit_code: z.number().int().optional(),
  /** A log file the server created for this session at the caller's path (output.log links to it). */
  log_file: z.string().optional(),
  /** Identity of that file when created: a file found there later that is not this one is not read. */
  log_file_id: z.object({ dev: z.number(), ino: z.number() }).optional(),
  error_log: z.array(z.string()).default([]),
  messages_sent: z.number().int().default(0),
  responses_received: z.number().int().default(0),
  total_chars_sent: z.number().int().default(0),
  total_chars_received: z.number().int().default(0),
  /** A git worktree the server made for this session (start_session {worktree}); kill_session may remove it. */
  worktree: z
    .object({ path: z.string(), branch: z.string(), base: z.string(), base_commit: z.string().optional(), repo: z.string() })
    .optional(),
  /** A fork (resume_session {fork}): the session and conversation it branched from, and when (its copied history is not its own usage). */
  forked_from: z.object({ session_id: z.string(), claude_session_id: z.string(), at: z.string() }).optional(),
  /** A warm-pool spare not yet taken by a call: its pool key (warm-pool.ts); removed when a call takes it. */
  spare: z.string().optional(),
  /** A move's copy not yet committed (move_session): hidden from listings; the coordinator commits or removes it. */
  incoming: z.object({ move_id: z.string(), wrote_transcript: z.boolean() }).optional(),
  /** Launch options kept for resume_session. */
  options: StoredOptionsSchema.default({}),
});

export type SessionRecord = z.infer<typeof SessionRecordSchema>;

export const StateFileSchema = z.object({
  version: z.string(),
  updated_at: z.string(),
  sessions: z.record(z.string(), SessionRecordSchema),
});

export type StateFile = z.infer<typeof StateFileSchema>;

/**
 * A map of sessions without a prototype: ids such as `__proto__`, `constructor` or `toString` are
 * plain keys that are either there or not (a lookup never finds Object.prototype's members).
 */
export function sessionMap(from?: Record<string, SessionRecord>): Record<string, SessionRecord> {
  const m = Object.create(null) as Record<string, SessionRecord>;
  if (from) for (const k of Object.keys(from)) m[k] = from[k]!;
  return m;
}

export function emptyState(): StateFile {
  return { version: STATE_VERSION, updated_at: new Date().toISOString(), sessions: sessionMap() };
}

/** A new record with the counters at zero; the caller gives identity, place and command. */
export function newRecord(
  r: Pick<SessionRecord, "session_id" | "claude_session_id" | "backend" | "status" | "cwd"> & Partial<SessionRecord>,
): SessionRecord {
  return {
    created_at: new Date().toISOString(),
    command: "",
    args: [],
    env_names: [],
    turn_count: 0,
    error_log: [],
    messages_sent: 0,
    responses_received: 0,
    total_chars_sent: 0,
    total_chars_received: 0,
    options: {},
    ...r,
  };
}

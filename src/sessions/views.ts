/** Converters between the live fold, the stored record, and what the tools return. */
import type { SessionSummary, StartOutput } from "../api/index.js";
import { isLive } from "../core/status.js";
import type { BlockedScreen, Folded, PendingPermission } from "../events/reducer.js";
import type { SessionRecord } from "../store/schema.js";
import { launchWarnings } from "./launch/options.js";
import { sessionTotals } from "./spend/budget.js";

export function publicPending(p: PendingPermission): { tool_name: string; tool_input: unknown; suggestions?: unknown[] } {
  return { tool_name: p.tool_name, tool_input: p.tool_input, ...(p.suggestions ? { suggestions: p.suggestions } : {}) };
}

export function publicBlocked(b: Pick<BlockedScreen, "kind" | "text" | "choices" | "since">): {
  kind: BlockedScreen["kind"];
  text: string;
  choices: string[];
  since?: string;
} {
  return { kind: b.kind, text: b.text, choices: [...b.choices], ...(b.since ? { since: b.since } : {}) };
}

/** A session whose last turn hit a limit is shown `limited` while it waits: idle (being parked) or hibernated. */
export function limitedShown(status: string): boolean {
  return status === "idle" || status === "hibernated";
}

/** Writes what the fold knows into a stored record (the fold is the truth; the record a snapshot of it). */
export function applyFold(r: SessionRecord, f: Folded): void {
  const wasLive = isLive(r.status);
  r.status = f.status === "starting" && !wasLive && r.status !== "starting" ? r.status : f.status;
  if (f.claude_session_id) r.claude_session_id = f.claude_session_id;
  r.turn_count = f.turn_count;
  // Counted per ended turn with a reply (three turns with the same reply are three), over the whole log.
  r.responses_received = f.responses;
  r.total_chars_received = f.response_chars;
  if (f.last_response !== undefined) r.last_response = f.last_response;
  if (f.last_error) r.last_error = f.last_error;
  else delete r.last_error;
  if (f.pending_permission) r.pending_permission = publicPending(f.pending_permission);
  else delete r.pending_permission;
  if (f.blocked && f.status === "blocked") r.blocked = publicBlocked(f.blocked);
  else delete r.blocked;
  if (f.exit_code !== undefined) r.exit_code = f.exit_code;
  if (f.needs_input) r.needs_input = f.needs_input.message;
  else delete r.needs_input;
  if (f.shutdown_requested) r.shutdown_requested = f.shutdown_requested;
  else delete r.shutdown_requested;
  if (f.last_event_at) r.last_active = f.last_event_at;
  if (f.sandbox_violations) r.sandbox_violations = f.sandbox_violations;
  if (f.limit?.resets_at)
    r.limit = {
      resets_at: f.limit.resets_at,
      limit_kind: f.limit.kind,
      reset_known: f.limit.reset_known,
      message: f.limit.message,
      ...(f.limit.wake_at ? { wake_at: f.limit.wake_at } : {}),
    };
  else delete r.limit;
  if (!isLive(f.status)) delete r.pid;
}

/** The short form list_sessions returns. */
export function summary(
  r: SessionRecord,
  opts: { survivesRestart: boolean; attachCommand?: string | undefined; dirty?: boolean | undefined },
): SessionSummary {
  const s: SessionSummary = {
    session_id: r.session_id,
    claude_session_id: r.claude_session_id,
    status: r.status,
    backend: r.backend,
    survives_restart: opts.survivesRestart,
    cwd: r.cwd,
    created_at: r.created_at,
    turn_count: r.turn_count,
  };
  if (r.pid !== undefined && isLive(r.status)) s.pid = r.pid;
  if (r.last_active) s.last_active = r.last_active;
  if (r.team_name) s.team_name = r.team_name;
  if (r.teammate_name) s.teammate_name = r.teammate_name;
  if (r.team_name && r.options.team_lead) s.team_lead = true;
  if (r.spare !== undefined) s.spare = true;
  if (r.model) s.model = r.model;
  if (r.permission_mode) s.permission_mode = r.permission_mode;
  if (r.claude_version) s.claude_version = r.claude_version;
  if (r.sandbox) s.sandboxed = true;
  if (r.account) s.account = r.account;
  if (r.sandbox_violations) s.sandbox_violations = r.sandbox_violations;
  if (r.needs_input && isLive(r.status)) s.needs_input = r.needs_input;
  if (r.shutdown_requested && isLive(r.status)) s.shutdown_requested = r.shutdown_requested;
  if (r.pending_permission && r.status === "waiting_for_permission")
    s.pending_permission = publicPending({ ...r.pending_permission, seq: 0 });
  if (r.blocked && r.status === "blocked") s.blocked = publicBlocked(r.blocked);
  if (r.limit && limitedShown(r.status)) {
    s.status = "limited";
    s.limit = { ...r.limit, ...(r.account ? { account: r.account } : {}) };
  }
  if (opts.attachCommand && isLive(r.status)) s.attach_command = opts.attachCommand;
  if (r.max_budget_usd !== undefined) s.max_budget_usd = r.max_budget_usd;
  if (r.worktree) {
    s.branch = r.worktree.branch;
    s.base = r.worktree.base;
    if (opts.dirty !== undefined) s.dirty = opts.dirty;
  }
  return Object.assign(s, sessionTotals(r));
}

/** What start_session (and resume_session, with more) returns. */
export function startView(
  r: SessionRecord,
  status: SessionRecord["status"],
  attachCommand: string | undefined,
  stateDir?: string,
): StartOutput {
  const out: StartOutput = { session_id: r.session_id, claude_session_id: r.claude_session_id, status, backend: r.backend };
  if (r.pid !== undefined) out.pid = r.pid;
  if (r.host?.target) out.tmux_target = r.host.target;
  if (r.host?.pane) out.tmux_pane = r.host.pane;
  if (r.team_name) out.team_name = r.team_name;
  if (r.teammate_name) out.teammate_name = r.teammate_name;
  out.cwd = r.cwd;
  if (r.worktree) out.worktree = { path: r.worktree.path, branch: r.worktree.branch, base: r.worktree.base };
  if (attachCommand) out.attach_command = attachCommand;
  if (r.started_at) out.started_at = r.started_at;
  if (r.permission_mode) out.permission_mode = r.permission_mode;
  if (r.claude_version) out.claude_version = r.claude_version;
  if (r.sandbox) out.sandboxed = true;
  const warnings = launchWarnings(r, stateDir);
  if (warnings) out.warnings = warnings;
  return out;
}

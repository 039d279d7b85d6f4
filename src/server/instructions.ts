/**
 * The server's `instructions`: what every client's model reads at start. They name every tool of tools/list
 * (tests/unit/instructions.test.ts holds them to it), grouped by what a caller does.
 */
export const INSTRUCTIONS = [
  "claude-sessions runs many Claude Code sessions side by side: interactive in tmux panes or PTYs, or headless (the CLI through the Agent SDK, no terminal).",
  "A session: start_session {cwd} → send_message {session_id, message} (waits for the reply by default; the " +
    "result carries the turn's usage, cost and the session's totals, or usage_pending and a usage notification " +
    "after; a failed turn is a tool error) → wait_for_completion for long turns → respond_permission when a turn " +
    "waits for a permission answer (pending_permission), answer_prompt when it shows another screen that waits for " +
    "an answer (status blocked, with its choices) → interrupt_session to stop a turn → kill_session when done; " +
    "resume_session brings an ended session back with its conversation (fork: true makes a new session from any " +
    "session's conversation so far).",
  "Context: reset_session starts a fresh conversation in an idle session, compact_session summarises its conversation.",
  'Machines: with the operator\'s nodes.json, start_session {node} runs a session on another machine ("auto" picks ' +
    "one); every other tool then reaches it by its session_id, and list_sessions {node_filter} shows one node's.",
  "One-shot work: run_task {cwd, prompt} starts a headless session, runs one turn and returns its answer.",
  "Unattended work: schedule_task {name, cwd, prompt, cron | at | every} runs run_task as schedule:<name> while a " +
    "server runs; list_schedules shows each run's outcome, cost and duration; change_schedule pauses, resumes or deletes " +
    "one.",
  "Watching: list_sessions (status, turns, totals, and the node a session runs on; include_metadata adds the record " +
    "and turn metrics), stream_output (screen, log or transcript; follow to wait for more), the session:// resources. " +
    "A person can watch a tmux session with the attach_command that start_session returns.",
  "Teammates: every session with a team_name gets its own tools to list, message and hand off to its teammates and " +
    "to request shutdown; start_session {team_lead: true} makes one the lead (it may start and end teammates). A member's " +
    "request_shutdown reaches you as a notification (event shutdown_requested): kill_session approves. team://{team_name}/handoffs " +
    "holds the team's hand-offs.",
  "Teams: start sessions with team_name and teammate_name, then broadcast_message sends one prompt to all and wait_for_sessions " +
    "waits for all (or any) of them. sync_context tells a session what changed in its directory since the last sync.",
  "Parallel attempts: fan_out {cwd, prompt, n} runs one prompt in n sessions, each in its own git worktree from the " +
    "repository's clean HEAD, runs the operator's checks in each and returns them ranked (best first); merge_worktree " +
    "{session_id} lands one session's changes in the branch it started from, one merge at a time, after the checks " +
    "pass on the merged result (a conflict or a failed check changes nothing).",
  "History: list_conversations, get_conversation and search_conversations read Claude Code's transcripts (any conversation); " +
    "get_execution_history and clear_execution_history are this server's record of the turns it ran.",
  "Server: health_check says what works (tmux, pty, headless, the CLI); configure reads the settings (get_config) " +
    "and, when the operator allows it, switches permission bypass; move_session carries an idle or hibernated session " +
    "to another node (transfer_session is its step on each machine, for coordinators).",
  "Retries: the tools that start work (a session, a turn, a process) take idempotency_key: the same key from the " +
    "same client within 24 h returns the first call's result (waiting while it runs) instead of running it again; the " +
    "key with other arguments is IDEMPOTENCY_MISMATCH.",
  "Listing: an argument listed with its type only is described in the earlier tool its tool's description names " +
    '("See …", "Also every argument of …"); a result\'s outputSchema lists its key fields, and the text copy has them ' +
    "all.",
  "Budgets: a session with max_budget_usd refuses prompts (LIMIT_REACHED) once spent, and refuses to start or go " +
    "on when its cost cannot be computed (a model without a price); cost_complete: false marks a cost that leaves out " +
    "unpriced tokens.",
].join("\n");

/**
 * The instructions for a server offering only some tools (CLAUDE_SESSIONS_TOOLSETS): the lines that name a tool it
 * does not offer are left out, so the model reads only about tools it has.
 */
export function instructionsFor(offered: ReadonlySet<string>, all: readonly string[]): string {
  const missing = all.filter((n) => !offered.has(n));
  return INSTRUCTIONS.split("\n")
    .filter((line) => !missing.some((n) => new RegExp(`\\b${n}\\b`).test(line)))
    .join("\n");
}

/** Schemas of the tools that start, resume, end and list sessions. */
import { z } from "zod";
import { PERMISSION_MODES } from "../core/modes.js";
import { SessionRecordSchema } from "../store/schema.js";
import {
  addressFields,
  backend,
  blockedScreen,
  doppler,
  limitShown,
  env,
  idempotencyField,
  nodeField,
  nodeName,
  pendingPermission,
  sandboxOption,
  sessionId,
  status,
  teamName,
  teammateName,
  usage,
} from "./common.js";
import { copyFiles, dopplerFlat, setupCommand, worktreeOption } from "./teams.js";
import { claudeOptionFields, resumeClaudeOptionFields } from "./headless.js";

const nodeStatus = z.enum(["reachable", "connecting", "unreachable"]);

const permissionMode = z.enum(PERMISSION_MODES);

/** The conflict radar (issue 34): files this live session and another live session of its repository both edited. */
const overlaps = z
  .array(z.strictObject({ session_id: z.string().describe("The other session."), file: z.string() }))
  .describe("Files another live session of the same repository also edited.");

export const startInput = z
  .object({
    session_id: sessionId.optional().describe("Same id + options: same session."),
    cwd: z.string().min(1).max(4096),
    prompt: z.string().optional(),
    model: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\s\0]+$/)
      .optional()
      .describe("e.g. sonnet."),
    permission_mode: permissionMode.optional().describe("bypassPermissions needs CLAUDE_SESSIONS_ALLOW_BYPASS."),
    max_turns: z.number().int().min(1).max(100000).optional().describe("headless: agent turns per prompt; else prompts."),
    max_budget_usd: z.number().positive().max(1_000_000).optional().describe("USD; prompts refused once spent."),
    team_name: teamName.optional().describe("Join this team."),
    teammate_name: teammateName.optional().describe("Default: generated."),
    team_lead: z.boolean().optional(),
    append_system_prompt: z.string().max(100000).optional(),
    add_dirs: z.array(z.string().min(1).max(4096)).max(64).optional().describe("--add-dir"),
    allowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
    disallowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
    env: env.optional(),
    log_file: z.string().min(1).max(4096).optional().describe("New file: raw output."),
    backend: backend.optional(),
    stream_output: z.boolean().optional().describe("Subscribe to session://{id}/transcript."),
    doppler: doppler.optional(),
    trust_workspace: z.boolean().optional().describe("Accept 'trust this folder'."),
    ...dopplerFlat,
    worktree: worktreeOption.optional(),
    copy_files: copyFiles.optional(),
    setup_command: setupCommand.optional(),
    sandbox: sandboxOption.optional(),
    ...claudeOptionFields,
    node: nodeName.optional().describe("nodes.json name, local or auto."),
    account: z.string().min(1).max(64).optional().describe("CLAUDE_SESSIONS_ACCOUNTS name or auto."),
    on_limit: z.enum(["wait", "fail", "switch_account"]).optional(),
    ...idempotencyField,
  })
  .strict();

export const startOutput = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  status,
  backend,
  pid: z.number().optional(),
  tmux_target: z.string().optional(),
  tmux_pane: z.string().optional().describe("The tmux pane id (the design's name)."),
  attach_command: z.string().optional(),
  started_at: z.string().optional(),
  team_name: z.string().optional(),
  teammate_name: z.string().optional(),
  cwd: z.string().optional(),
  worktree: z.strictObject({ path: z.string(), branch: z.string(), base: z.string() }).optional(),
  permission_mode: z
    .string()
    .optional()
    .describe("The permission mode the CLI runs in (passed explicitly: the one asked for, else the server's default)."),
  claude_version: z.string().optional().describe("The Claude Code CLI version the session runs."),
  sandboxed: z.boolean().optional(),
  output_resource: z.string().optional().describe("stream_output: the subscribed resource."),
  warnings: z
    .array(z.string())
    .optional()
    .describe("Things the caller should know, e.g. a CLI outside the project's tested range (the session runs anyway)."),
  ...nodeField,
});

export const resumeInput = z
  .object({
    ...addressFields,
    claude_session_id: z.string().max(64).optional().describe("Adopt any conversation (needs cwd)."),
    cwd: z.string().min(1).max(4096).optional().describe("Default: the session's."),
    message: z.string().optional(),
    fork: z.boolean().optional(),
    resume_at: z.string().uuid().optional().describe("headless: from this get_conversation uuid."),
    // start_session's own fields (listed once): given ones replace the stored ones, for later resumes too.
    model: startInput.shape.model,
    permission_mode: startInput.shape.permission_mode,
    allowed_tools: startInput.shape.allowed_tools,
    disallowed_tools: startInput.shape.disallowed_tools,
    add_dirs: startInput.shape.add_dirs,
    append_system_prompt: startInput.shape.append_system_prompt,
    max_budget_usd: z.number().positive().max(1_000_000).optional().describe("USD; prompts refused once spent."),
    backend: backend.optional(),
    env: env.optional(),
    doppler: doppler.optional(),
    trust_workspace: z.boolean().optional(),
    account: startInput.shape.account.describe("Continue under this account (the transcript is copied to it)."),
    on_limit: startInput.shape.on_limit,
    ...dopplerFlat,
    ...resumeClaudeOptionFields,
    ...idempotencyField,
  })
  .strict();

export const resumeOutput = startOutput.extend({
  // An unknown session_id is answered as the design has it: status not_found, and nothing else started.
  status: z.union([status, z.literal("not_found")]).describe("not_found: no such session_id (nothing started)."),
  claude_session_id: z.string().optional(),
  backend: backend.optional(),
  resumed_at: z.string(),
  forked: z.boolean(),
  forked_from: z.string().optional().describe("fork: the parent session."),
  previous_state: z
    .strictObject({ created_at: z.string(), last_active: z.string().optional(), claude_session_id: z.string() })
    .optional(),
  already_running: z
    .boolean()
    .optional()
    .describe("Another call resumed it at the same moment: this is that call's session, not a second process."),
});

export const killInput = z
  .object({
    ...addressFields,
    force: z.boolean().default(false),
    remove_worktree: z.boolean().optional().describe("If clean, or with force."),
    save_state: z.boolean().default(true).describe("Keep it resumable."),
    hibernate: z.boolean().optional().describe("End the process; a prompt wakes it."),
  })
  .strict();

export const killOutput = z.strictObject({
  session_id: z.string(),
  status: z.enum(["killed", "not_found", "already_dead", "hibernated"]),
  exit_code: z.number().optional(),
  left_running: z
    .array(z.number())
    .optional()
    .describe("Processes of the session (its tree, including ones that left its process group) still running after the kill."),
  state_saved: z.boolean(),
  killed_at: z.string(),
  worktree_removed: z.boolean().optional(),
  ...nodeField,
});

export const listInput = z
  .object({
    status_filter: z.enum(["all", "active", "inactive", "error"]).default("all"),
    team_filter: z.string().max(200).optional(),
    limit: z.number().int().min(0).max(100000).optional(),
    include_metadata: z.boolean().default(false).describe("Each session's whole record."),
    include_sensitive: z.boolean().default(false).describe("Also argv, prompts, env names (CLAUDE_SESSIONS_ALLOW_SENSITIVE)."),
    include_native: z.boolean().default(false).describe("Also claude agents' sessions."),
    node_filter: nodeName.optional().describe("Only this node's (local: here)."),
  })
  .strict();

/** One of Claude Code's own sessions (claude agents --json), read-only. */
export const nativeSession = z.strictObject({
  id: z
    .string()
    .optional()
    .describe("The short id (background sessions): send_message {native_session_id}, or `claude attach <id>`."),
  kind: z.enum(["background", "interactive"]),
  state: z.string().optional().describe("The CLI's job state: working, blocked, done, failed, stopped."),
  status: z.string().optional().describe("The process: idle, busy or waiting (Claude Code 2.1.330 and later, while it runs)."),
  waiting_for: z.string().optional(),
  pid: z.number().optional(),
  cwd: z.string().optional(),
  claude_session_id: z.string().optional(),
  name: z.string().optional(),
  started_at: z.string().optional(),
  managed_session_id: z.string().optional().describe("The session of this server that runs this conversation, if one does."),
  attach_command: z.string().optional(),
});

export const sessionSummary = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  status,
  backend,
  survives_restart: z.boolean(),
  pid: z.number().optional(),
  cwd: z.string(),
  created_at: z.string(),
  last_active: z.string().optional(),
  team_name: z.string().optional(),
  teammate_name: z.string().optional(),
  team_lead: z.boolean().optional().describe("true: its team's lead (start_session team_lead)."),
  spare: z
    .boolean()
    .optional()
    .describe(
      "A warm-pool spare (CLAUDE_SESSIONS_WARM_POOL) no call has taken yet: the next start_session or run_task with its options takes it.",
    ),
  model: z.string().optional(),
  permission_mode: z.string().optional().describe("The permission mode the CLI runs in."),
  claude_version: z.string().optional().describe("The Claude Code CLI version the session runs (read at start/resume)."),
  sandboxed: z.boolean().optional(),
  sandbox_violations: z.number().optional(),
  turn_count: z.number(),
  pending_permission: pendingPermission.optional(),
  needs_input: z
    .string()
    .optional()
    .describe("Claude Code says the session waits for the user (its agent_needs_input notification)."),
  shutdown_requested: z.string().optional().describe("A team member asked to be ended (why); kill_session approves."),
  blocked: blockedScreen.optional(),
  limit: limitShown.optional().describe("status limited: the usage or rate limit the last turn hit."),
  account: z.string().optional(),
  attach_command: z.string().optional(),
  total_usage: usage.optional().describe("Tokens of the whole session (each API message once, sub-agents included)."),
  total_cost_usd: z
    .number()
    .nullable()
    .optional()
    .describe("What the session has cost in USD; null when no model's price is known."),
  cost_complete: z
    .boolean()
    .optional()
    .describe("false: total_cost_usd leaves out tokens of a model without a price (a lower bound)."),
  max_budget_usd: z.number().optional(),
  limit_reached: z.string().optional().describe("Why the session refuses prompts (e.g. its max_budget_usd is spent)."),
  branch: z.string().optional().describe("Sessions in their own git worktree: its branch."),
  base: z.string().optional().describe("The commit (or ref) the worktree's branch was made from."),
  dirty: z.boolean().optional().describe("The worktree has uncommitted changes."),
  overlaps: overlaps.optional(),
  ...nodeField,
  node_status: nodeStatus.optional().describe("unreachable: the node does not answer; this is its last known state."),
});

/** include_metadata: per-session figures (turn counts and times from the execution history, tokens and cost from the session's totals). */
export const sessionMetrics = z.strictObject({
  turns: z.number().describe("Turns in the execution history (within its retention), start failures and deaths included."),
  avg_turn_ms: z.number().nullable(),
  p95_turn_ms: z.number().nullable().describe("95th percentile turn time (nearest rank)."),
  error_rate: z.number().nullable().describe("Share of those turns that failed, died or never started (0–1)."),
  usage,
  cost_usd: z.number().nullable(),
  cost_complete: z.boolean().describe("false: cost_usd leaves out tokens of a model without a price (a lower bound)."),
});

/** include_metadata: the stored record as it is, plus whether it outlives the server. */
export const sessionRecordView = SessionRecordSchema.extend({
  // The stored options are typed in the store (store/options.ts); the published shape stays an open object.
  options: z.record(z.string(), z.unknown()).default({}),
  metrics: sessionMetrics.optional().describe("Turns, average and p95 turn time, error rate, tokens and cost."),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env_names: z.array(z.string()).optional(),
  survives_restart: z.boolean(),
  overlaps: overlaps.optional(),
  ...nodeField,
  node_status: nodeStatus.optional(),
});

export const listOutput = z.strictObject({
  sessions: z.array(z.union([sessionSummary, sessionRecordView])),
  total_count: z.number(),
  filtered_count: z.number(),
  native_sessions: z.array(nativeSession).optional().describe("include_native: Claude Code's own sessions."),
  native_error: z
    .string()
    .optional()
    .describe("include_native: why the CLI could not list them (e.g. a Claude Code without `claude agents --json`)."),
  nodes: z
    .array(
      z.strictObject({
        name: z.string(),
        status: nodeStatus,
        sessions: z.number().describe("Sessions of the node in this answer's count (the last known ones when unreachable)."),
        version: z.string().optional(),
        error: z.string().optional(),
      }),
    )
    .optional()
    .describe("With nodes configured: each node's link (this machine is not listed)."),
});

export const resetInput = z.object({ ...addressFields }).strict();

export const resetOutput = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string().describe("The new conversation."),
  old_claude_session_id: z.string().describe("The conversation before the reset (still resumable)."),
  status,
  ...nodeField,
});

export const compactInput = z
  .object({
    ...addressFields,
    instructions: z.string().max(2000).optional().describe("One line typed after /compact."),
    ...idempotencyField,
  })
  .strict();

export const compactOutput = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  status,
  compacted_at: z.string(),
  ...nodeField,
});

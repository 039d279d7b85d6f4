/** Schemas of the tools that start, resume, end and list sessions. */
import { z } from "zod";
import { PERMISSION_MODES } from "../core/modes.js";
import { SessionRecordSchema } from "../store/schema.js";
import { addressFields, backend, blockedScreen, doppler, env, nodeField, nodeName, pendingPermission, sessionId, status, teamName, teammateName, usage } from "./common.js";
import { copyFiles, dopplerFlat, setupCommand, worktreeOption } from "./teams.js";
import { headlessOptionFields } from "./headless.js";

const nodeStatus = z.enum(["reachable", "connecting", "unreachable"]);

const permissionMode = z.enum(PERMISSION_MODES);

export const startInput = z
  .object({
    session_id: sessionId.optional().describe("Choose the session id (the design's form). The same id with the same options returns the existing session; with other options, INVALID_ARGUMENT."),
    cwd: z.string().min(1).max(4096).describe("Working directory of the session (must exist)."),
    prompt: z.string().optional().describe("A first prompt, delivered once the session is ready (the same rules as send_message's message)."),
    model: z.string().min(1).max(200).regex(/^[^\s\0]+$/).optional().describe("Model name or alias, e.g. sonnet or claude-opus-4-8."),
    permission_mode: permissionMode
      .optional()
      .describe(
        "Claude Code permission mode, always passed to the CLI (default: the server's, \"default\", which asks before tools; CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE changes it). auto: the vendor's classifier decides, and tool calls it allows are not surfaced. bypassPermissions needs the server's CLAUDE_SESSIONS_ALLOW_BYPASS=1.",
      ),
    max_turns: z.number().int().min(1).max(100000).optional().describe("tmux/pty: the server refuses prompts after this many turns of the session (resume keeps the count). headless: the CLI's own limit of agentic turns per prompt (error_subtype error_max_turns)."),
    max_budget_usd: z
      .number()
      .positive()
      .max(1_000_000)
      .optional()
      .describe("Refuse prompts (LIMIT_REACHED) once the session's cost reaches this many USD (resume may raise it); a headless session's CLI also stops a turn that crosses it."),
    team_name: teamName.optional().describe("Join this team (broadcast_message, wait_for_sessions, and addressing by team_name + teammate_name)."),
    teammate_name: teammateName.optional().describe("This session's name in its team (default: a readable unique one)."),
    append_system_prompt: z.string().max(100000).optional(),
    add_dirs: z.array(z.string().min(1).max(4096)).max(64).optional().describe("More directories Claude may use (--add-dir)."),
    allowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
    disallowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
    env: env.optional(),
    log_file: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("An absolute path for a new file that gets the raw terminal output (created by the server, mode 0600; it must not exist yet, and its directory must exist and be yours)."),
    backend: backend.optional(),
    doppler: doppler.optional(),
    trust_workspace: z
      .boolean()
      .optional()
      .describe("Accept Claude Code's 'trust this folder' screen if it appears (headless: start in a folder Claude Code does not trust). The operator can turn it off (CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE=0)."),
    ...dopplerFlat,
    worktree: worktreeOption.optional(),
    copy_files: copyFiles.optional(),
    setup_command: setupCommand.optional(),
    ...headlessOptionFields,
    node: nodeName.optional().describe("Where the session runs: a node of the coordinator's nodes.json, \"local\" (this machine, the default) or \"auto\" (the reachable node with the most free slots, then free memory)."),
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
  permission_mode: z.string().optional().describe("The permission mode the CLI runs in (passed explicitly: the one asked for, else the server's default)."),
  claude_version: z.string().optional().describe("The Claude Code CLI version the session runs."),
  warnings: z.array(z.string()).optional().describe("Things the caller should know, e.g. a CLI outside the project's tested range (the session runs anyway)."),
  ...nodeField,
});

export const resumeInput = z
  .object({
    ...addressFields,
    claude_session_id: z.string().max(64).optional().describe("Adopt a conversation this server never started (needs cwd)."),
    cwd: z.string().min(1).max(4096).optional().describe("Working directory (default: the session's own)."),
    message: z.string().optional().describe("A prompt to deliver once the session is ready."),
    fork: z.boolean().optional(),
    max_budget_usd: z.number().positive().max(1_000_000).optional().describe("Refuse prompts (LIMIT_REACHED) once the session's cost reaches this many USD (resume may raise it)."),
    backend: backend.optional(),
    env: env.optional(),
    doppler: doppler.optional(),
    trust_workspace: z.boolean().optional(),
    ...dopplerFlat,
    ...headlessOptionFields,
  })
  .strict();

export const resumeOutput = startOutput.extend({
  resumed_at: z.string(),
  forked: z.boolean(),
  previous_state: z.strictObject({ created_at: z.string(), last_active: z.string().optional(), claude_session_id: z.string() }),
  already_running: z.boolean().optional().describe("Another call resumed it at the same moment: this is that call's session, not a second process."),
});

export const killInput = z
  .object({
    ...addressFields,
    force: z.boolean().default(false),
    remove_worktree: z.boolean().optional().describe("Also remove the session's git worktree: only when it has no uncommitted changes, unless force (its branch is kept)."),
    save_state: z.boolean().default(true).describe("Keep the record so resume_session can bring the conversation back."),
  })
  .strict();

export const killOutput = z.strictObject({
  session_id: z.string(),
  status: z.enum(["killed", "not_found", "already_dead"]),
  exit_code: z.number().optional(),
  left_running: z.array(z.number()).optional().describe("Processes of the session (its tree, including ones that left its process group) still running after the kill."),
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
    include_metadata: z.boolean().default(false).describe("Return the whole stored record of each session (argv, system prompt and environment names left out)."),
    include_sensitive: z.boolean().default(false).describe("With include_metadata: keep argv, the appended system prompt and environment names. Only when the server allows it (CLAUDE_SESSIONS_ALLOW_SENSITIVE)."),
    include_native: z
      .boolean()
      .default(false)
      .describe("Also list Claude Code's own sessions (claude --bg, and interactive ones) as `claude agents --json --all` prints them: read-only, in native_sessions."),
    node_filter: nodeName.optional().describe("Only the sessions of this node (\"local\": this machine's)."),
  })
  .strict();

/** One of Claude Code's own sessions (claude agents --json), read-only. */
export const nativeSession = z.strictObject({
  id: z.string().optional().describe("The short id (background sessions): send_message {native_session_id}, or `claude attach <id>`."),
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
  model: z.string().optional(),
  permission_mode: z.string().optional().describe("The permission mode the CLI runs in."),
  claude_version: z.string().optional().describe("The Claude Code CLI version the session runs (read at start/resume)."),
  turn_count: z.number(),
  pending_permission: pendingPermission.optional(),
  needs_input: z.string().optional().describe("Claude Code says the session waits for the user (its agent_needs_input notification)."),
  blocked: blockedScreen.optional(),
  attach_command: z.string().optional(),
  total_usage: usage.optional().describe("Tokens of the whole session (each API message once, sub-agents included)."),
  total_cost_usd: z.number().nullable().optional().describe("What the session has cost in USD; null when a model's price is not known."),
  max_budget_usd: z.number().optional(),
  limit_reached: z.string().optional().describe("Why the session refuses prompts (e.g. its max_budget_usd is spent)."),
  branch: z.string().optional().describe("Sessions in their own git worktree: its branch."),
  base: z.string().optional().describe("The commit (or ref) the worktree's branch was made from."),
  dirty: z.boolean().optional().describe("The worktree has uncommitted changes."),
  ...nodeField,
  node_status: nodeStatus.optional().describe("unreachable: the node does not answer; this is its last known state."),
});

/** include_metadata: the stored record as it is, plus whether it outlives the server. */
export const sessionRecordView = SessionRecordSchema.extend({
  // The stored options are typed in the store (store/options.ts); the published shape stays an open object.
  options: z.record(z.string(), z.unknown()).default({}),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env_names: z.array(z.string()).optional(),
  survives_restart: z.boolean(),
  ...nodeField,
  node_status: nodeStatus.optional(),
});

export const listOutput = z.strictObject({
  sessions: z.array(z.union([sessionSummary, sessionRecordView])),
  total_count: z.number(),
  filtered_count: z.number(),
  native_sessions: z.array(nativeSession).optional().describe("include_native: Claude Code's own sessions."),
  native_error: z.string().optional().describe("include_native: why the CLI could not list them (e.g. a Claude Code without `claude agents --json`)."),
  nodes: z
    .array(z.strictObject({ name: z.string(), status: nodeStatus, sessions: z.number().describe("Sessions of the node in this answer's count (the last known ones when unreachable)."), version: z.string().optional(), error: z.string().optional() }))
    .optional()
    .describe("With nodes configured: each node's link (this machine is not listed)."),
});

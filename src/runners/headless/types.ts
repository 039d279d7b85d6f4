/**
 * The headless engine's public shapes: what a session is started with, what a turn returns, and what a
 * permission request and its answer look like. Field names follow the MCP tools (snake_case).
 */
import type {
  EffortLevel,
  McpServerConfig,
  ModelUsage,
  SdkBeta,
  SDKMessage,
  SettingSource,
} from "@anthropic-ai/claude-agent-sdk";
import type { PermissionModeName } from "../../core/modes.js";
import type { LiveSession } from "../../events/live.js";

export type PermissionMode = PermissionModeName;

export interface HeadlessOptions {
  /** Working directory of the session (absolute). */
  cwd: string;
  /** The claude binary to run (the SDK's pathToClaudeCodeExecutable). */
  claude_path: string;
  /** `<state>/<id>/events.jsonl`: the hooks and the engine append to it. */
  events_path: string;
  /** `<state>/<id>/settings.json`: written by the engine with the hooks (src/claude/hooks.ts), passed as --settings. */
  settings_path: string;
  /** Extra variables for the child only (secrets go here: never argv, never logs). */
  env?: Record<string, string>;
  /** The environment the child's is built from (default process.env, less what breaks a nested start). */
  base_env?: NodeJS.ProcessEnv;
  model?: string;
  permission_mode?: PermissionMode;
  /** Appended to Claude Code's own system prompt. */
  append_system_prompt?: string;
  /** Replaces Claude Code's system prompt (wins over append_system_prompt). */
  system_prompt?: string;
  max_turns?: number;
  max_budget_usd?: number;
  fallback_model?: string;
  /** MCP servers for the session; sent in the initialize request, so their env and headers stay off argv. */
  mcp_servers?: Record<string, McpServerConfig>;
  strict_mcp_config?: boolean;
  /** A team session's member server: a configuration file given as `--mcp-config` (its secret stays in env). */
  member_mcp_config?: string;
  /** Run the CLI through the sandbox launcher (issue 32): `<node> <launcher> <spec> -- <command> <args…>`. */
  launcher?: { node: string; launcher: string; spec_path: string };
  /** Which settings files Claude Code loads (default: all, as the CLI). */
  setting_sources?: SettingSource[];
  /** A JSON schema: each turn's result carries `structured_output` matching it. */
  output_schema?: Record<string, unknown>;
  allowed_tools?: string[];
  disallowed_tools?: string[];
  add_dirs?: string[];
  effort?: EffortLevel;
  /** Custom sub-agents (snake_case fields; the SDK's AgentDefinition once mapped). */
  agents?: Record<
    string,
    {
      description: string;
      prompt: string;
      tools?: string[] | undefined;
      disallowed_tools?: string[] | undefined;
      model?: string | undefined;
    }
  >;
  /** The main thread's agent. */
  agent?: string;
  /** The built-in tool set ([]: none). */
  tools?: string[];
  betas?: SdkBeta[];
  /** Claude's debug log goes to this file (the SDK's debugFile). */
  debug_file?: string;
  /** Resume this Claude session id (same id unless fork_session). */
  resume?: string;
  fork_session?: boolean;
  /** With resume: only the conversation up to and including this entry (the SDK's resumeSessionAt). */
  resume_at?: string;
  /** The Claude session id of a new session or of a fork (default: a new UUID). */
  claude_session_id?: string;
  /** Deny a permission request nobody answered after this long (default DEFAULT_PERMISSION_TIMEOUT_MS, src/core/modes.ts). */
  permission_timeout_ms?: number;
  /** Deliver prompts with client_composed (no slash commands, no @file expansion). Default false. */
  verbatim_prompts?: boolean;
  /** SessionStart must arrive within this (default 30000). */
  start_timeout_ms?: number;
  /** The spawn generation (the session layer's): `cs:spawn` and `cs:exit` carry it. */
  generation?: number;
  /** The fold and waiters of `events_path` (started by the caller, who also closes it): the engine's view of the session. */
  live: LiveSession;
  /**
   * The session layer runs this session: it wrote settings.json, appended `cs:spawn` and waits for start-up itself,
   * so the engine does none of these (start() returns once the CLI is launched).
   */
  managed?: boolean;
  /** Every message from the SDK, in order (for a transcript-like stream). */
  on_message?: (m: SDKMessage) => void;
  /** A tool waits for an answer (see HeadlessSession.respondPermission). */
  on_permission?: (req: PermissionRequestInfo) => void;
}

export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface PermissionDenial {
  tool_name: string;
  tool_use_id: string;
  tool_input: Record<string, unknown>;
}

/** What one send() got back: the turn's `result` message, with per-turn figures. */
export interface TurnResult {
  claude_session_id: string;
  /** The SDK's subtype: success, error_during_execution, error_max_turns, error_max_budget_usd, … */
  subtype: string;
  is_error: boolean;
  /** Set when the turn did not succeed: the subtype, or for an API error `api_error`. */
  error_subtype?: string;
  errors?: string[];
  api_error_status?: number;
  terminal_reason?: string;
  interrupted: boolean;
  /** The final assistant text ("" when the turn failed before any). */
  result: string;
  usage: TurnUsage;
  /** Per model, this turn only (the SDK reports running totals; the engine subtracts the previous ones). */
  model_usage: Record<string, ModelUsage>;
  /** This turn's estimated cost. */
  cost_usd: number;
  /** Running total for the conversation as the CLI reports it. */
  total_cost_usd: number;
  duration_ms: number;
  duration_api_ms: number;
  /** Model round-trips within this turn. */
  num_turns: number;
  stop_reason: string | null;
  permission_denials: PermissionDenial[];
  structured_output?: unknown;
}

export type PermissionDecision = "allow" | "allow_always" | "deny";

export interface PermissionAnswer {
  decision: PermissionDecision;
  /** For deny: what Claude is told. */
  message?: string;
  /** For allow/allow_always: the tool runs with this input instead. */
  updated_input?: Record<string, unknown>;
}

export interface PermissionRequestInfo {
  /** The tool_use id: answers name it. */
  id: string;
  tool_name: string;
  tool_input: Record<string, unknown>;
  /** Rules "always allow" would add (applied by allow_always). */
  suggestions: unknown[];
  title?: string;
  decision_reason?: string;
  blocked_path?: string;
  since: string;
}

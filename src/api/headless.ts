/**
 * Schemas of Claude Code's own options that not every backend honours (start/resume), and of the extra per-turn
 * figures the Agent SDK reports for headless sessions.
 */
import { z } from "zod";

const name = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s\0]+$/);
const strMap = z.record(z.string().max(200), z.string().max(100_000));

const mcpServer = z.union([
  z.strictObject({
    type: z.literal("stdio").optional(),
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(100_000)).max(500).optional(),
    env: strMap.optional(),
  }),
  z.strictObject({ type: z.literal("sse"), url: z.string().url().max(4096), headers: strMap.optional() }),
  z.strictObject({ type: z.literal("http"), url: z.string().url().max(4096), headers: strMap.optional() }),
]);

/** A custom sub-agent (the CLI's `--agents` entry); no hooks, MCP servers or permission mode of its own. */
const agentDef = z.strictObject({
  description: z.string().min(1).max(2000),
  prompt: z.string().min(1).max(50_000),
  tools: z.array(z.string().min(1).max(500)).max(200).optional().describe("Its tool set (default: the session's)."),
  disallowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
  model: name.optional(),
});

/** The longest `agents` (UTF-8 bytes of its JSON): a terminal session passes it as one argument. */
export const AGENTS_MAX_BYTES = 100_000;

/**
 * Claude Code's options that only some backends (or CLI versions) honour: each runner's capabilities say which;
 * another one refuses them with UNSUPPORTED_OPTION naming the one that does (docs/configuration.md has the table).
 * max_budget_usd is every backend's (the server refuses prompts past it); a headless session also hands it to the
 * CLI, which then stops a turn that crosses it (error_subtype error_max_budget_usd).
 */
export const claudeOptionFields = {
  system_prompt: z.string().max(100_000).optional(),
  fallback_model: name.optional(),
  mcp_servers: z
    .record(
      z
        .string()
        .min(1)
        .max(100)
        .regex(/^[A-Za-z0-9_-]+$/),
      mcpServer,
    )
    .optional()
    .describe("name: {command, args?, env?} | {type, url, headers?}"),
  strict_mcp_config: z.boolean().optional(),
  setting_sources: z
    .array(z.enum(["user", "project", "local"]))
    .max(3)
    .optional(),
  output_schema: z.record(z.string(), z.unknown()).optional().describe("headless: JSON Schema of structured_output."),
  effort: z.enum(["low", "medium", "high", "xhigh", "max"]).optional(),
  agents: z
    .record(
      z
        .string()
        .min(1)
        .max(64)
        .regex(/^[A-Za-z0-9_-]+$/),
      agentDef,
    )
    .refine((a) => Object.keys(a).length <= 50 && Buffer.byteLength(JSON.stringify(a)) <= AGENTS_MAX_BYTES, {
      message: `at most 50 agents and ${AGENTS_MAX_BYTES} bytes of JSON`,
    })
    .optional()
    .describe("name: {description, prompt, tools?, model?}"),
  agent: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional(),
  tools: z
    .array(
      z
        .string()
        .min(1)
        .max(200)
        .regex(/^[^\s,\0]+$/),
    )
    .max(100)
    .optional(),
  betas: z
    .array(z.enum(["context-1m-2025-08-07"]))
    .max(1)
    .optional(),
  debug: z.boolean().optional(),
};

/** The options a resume may give again (the others are kept from the start: resume_session's listing stays small). */
export const {
  effort: _e,
  agents: _a,
  agent: _g,
  tools: _t,
  betas: _b,
  debug: _d,
  ...resumeClaudeOptionFields
} = claudeOptionFields;

/** The option names above, for the refusal on a backend that does not honour one. */
export const CLAUDE_OPTIONS = Object.keys(claudeOptionFields) as (keyof typeof claudeOptionFields)[];

/** Per-turn figures the Agent SDK reports (headless turns). */
export const turnFigureFields = {
  duration_ms: z.number().optional().describe("headless: the turn's wall time in the CLI."),
  duration_api_ms: z.number().optional().describe("headless: time spent in API calls during the turn."),
  num_turns: z.number().optional().describe("headless: agentic turns (API round trips) the turn took."),
  stop_reason: z.string().nullable().optional().describe("headless: the last API message's stop reason."),
  error_subtype: z
    .string()
    .optional()
    .describe(
      "headless: why the turn ended in error: error_max_turns, error_max_budget_usd, error_during_execution (interrupt), " +
        "error_max_structured_output_retries, api_error.",
    ),
  permission_denials: z
    .array(
      z.strictObject({ tool_name: z.string(), tool_use_id: z.string(), tool_input: z.unknown(), reason: z.string().optional() }),
    )
    .optional()
    .describe(
      "Tool uses denied during the turn: headless, the SDK's result; every backend, auto mode's PermissionDenied hook " +
        "(with its reason; the turn went on without them).",
    ),
  structured_output: z.unknown().optional().describe("headless, with output_schema: the answer as JSON matching the schema."),
};

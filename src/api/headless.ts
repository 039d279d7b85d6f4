/**
 * Schemas for headless sessions (backend "headless": the CLI run through the Agent SDK, no terminal): the
 * options only that backend honours, the extra per-turn figures the SDK reports, and the run_task tool.
 */
import { z } from "zod";

const name = z.string().min(1).max(200).regex(/^[^\s\0]+$/);
const strMap = z.record(z.string().max(200), z.string().max(100_000));

const mcpServer = z.union([
  z.strictObject({ type: z.literal("stdio").optional(), command: z.string().min(1).max(4096), args: z.array(z.string().max(100_000)).max(500).optional(), env: strMap.optional() }),
  z.strictObject({ type: z.literal("sse"), url: z.string().url().max(4096), headers: strMap.optional() }),
  z.strictObject({ type: z.literal("http"), url: z.string().url().max(4096), headers: strMap.optional() }),
]);

/**
 * Start/resume options only the headless backend honours (another backend refuses them with INVALID_ARGUMENT).
 * max_budget_usd is every backend's (the server refuses prompts past it); a headless session also hands it to the
 * CLI, which then stops a turn that crosses it (error_subtype error_max_budget_usd).
 */
export const headlessOptionFields = {
  system_prompt: z.string().max(100_000).optional().describe("headless: replaces the system prompt."),
  fallback_model: name.optional().describe("headless: when the model is overloaded."),
  mcp_servers: z
    .record(z.string().min(1).max(100).regex(/^[A-Za-z0-9_-]+$/), mcpServer)
    .optional()
    .describe("headless: name → {command, args?, env?} | {type, url} (README)."),
  strict_mcp_config: z.boolean().optional().describe("headless: only mcp_servers."),
  setting_sources: z.array(z.enum(["user", "project", "local"])).max(3).optional().describe("headless (default: all)."),
  output_schema: z.record(z.string(), z.unknown()).optional().describe("headless: JSON Schema of structured_output."),
};

/** The option names above, for the refusal on other backends. */
export const HEADLESS_ONLY = Object.keys(headlessOptionFields) as (keyof typeof headlessOptionFields)[];

/** Per-turn figures the Agent SDK reports (headless turns). */
export const turnFigureFields = {
  duration_ms: z.number().optional().describe("headless: the turn's wall time in the CLI."),
  duration_api_ms: z.number().optional().describe("headless: time spent in API calls during the turn."),
  num_turns: z.number().optional().describe("headless: agentic turns (API round trips) the turn took."),
  stop_reason: z.string().nullable().optional().describe("headless: the last API message's stop reason."),
  error_subtype: z
    .string()
    .optional()
    .describe("headless: why the turn ended in error: error_max_turns, error_max_budget_usd, error_during_execution (interrupt), error_max_structured_output_retries, api_error."),
  permission_denials: z
    .array(z.strictObject({ tool_name: z.string(), tool_use_id: z.string(), tool_input: z.unknown(), reason: z.string().optional() }))
    .optional()
    .describe("Tool uses denied during the turn: headless, the SDK's result; every backend, auto mode's PermissionDenied hook (with its reason; the turn went on without them)."),
  structured_output: z.unknown().optional().describe("headless, with output_schema: the answer as JSON matching the schema."),
};

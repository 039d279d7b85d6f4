/**
 * The history tools, ready to wire: name, zod input and output, annotations, and a pure handler that
 * takes the History service and the execution log with the parsed arguments. The server adds the
 * JSON Schema, validation and error mapping as for every other tool.
 */
import { z } from "zod";
import type { ExecutionLog } from "./executions.js";
import { OUTCOMES } from "./executions.js";
import type { History } from "./history.js";

export interface HistoryDeps {
  history: History;
  executions: ExecutionLog;
}

export interface HistoryToolDef<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  handler(deps: HistoryDeps, args: z.infer<I>): z.infer<O>;
}

const def = <I extends z.ZodType, O extends z.ZodType>(t: HistoryToolDef<I, O>) => t;

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const date = (what: string) => z.string().min(1).max(64).describe(`${what} (ISO 8601, e.g. 2026-11-01 or 2026-11-01T09:00:00Z).`);
const claudeSessionId = z.string().min(1).max(128).regex(/^[A-Za-z0-9_-]+$/, "a Claude session id has only letters, digits, '-' and '_'");

export const usageSchema = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  cache_creation_5m_input_tokens: z.number(),
  cache_creation_1h_input_tokens: z.number(),
  cache_read_input_tokens: z.number(),
});

const indexState = {
  indexing: z.boolean().describe("True while the transcript index is being built or rebuilt: the answer covers what is indexed so far."),
  complete_at: z.string().nullable(),
  files_read: z.number().optional(),
  bytes_read: z.number().optional(),
};

const conversation = z.object({
  claude_session_id: z.string(),
  cwd: z.string().nullable(),
  project: z.string().describe("The transcripts folder name (the cwd with non-alphanumerics as '-')."),
  title: z.string().nullable(),
  first_activity: z.string().nullable(),
  last_activity: z.string().nullable(),
  turns: z.number(),
  items: z.number(),
  size_bytes: z.number(),
  models: z.array(z.string()),
  usage: usageSchema,
  cost_usd: z.number().nullable(),
  unpriced_models: z.array(z.string()),
});

export const listConversationsTool = def({
  name: "list_conversations",
  title: "List Claude Code conversations",
  description:
    "Lists conversations from Claude Code's transcripts (any session, not only this server's), newest activity first, with title, cwd, turns, models, token usage and cost. Pass next_cursor back for more.",
  input: z
    .object({
      cwd: z.string().min(1).max(4096).optional().describe("Only conversations run in this directory."),
      since: date("Only conversations active at or after this time").optional(),
      until: date("Only conversations active at or before this time").optional(),
      limit: z.number().int().min(1).max(10_000).default(50),
      cursor: z.string().max(512).optional().describe("next_cursor from a previous call."),
    })
    .strict(),
  output: z.object({ conversations: z.array(conversation), next_cursor: z.string().nullable(), total: z.number(), ...indexState }),
  annotations: readOnly,
  handler: ({ history }, args) => history.listConversations(args),
});

const toolCall = z.object({ name: z.string(), input: z.string() });

export const getConversationTool = def({
  name: "get_conversation",
  title: "Read a Claude Code conversation",
  description:
    "The messages of one conversation (user prompts, assistant replies, tool calls summarised), a page at a time: from the start (default) or the end, then next_cursor to read on and prev_cursor to read back.",
  input: z
    .object({
      claude_session_id: claudeSessionId,
      cursor: z.string().max(512).optional().describe("next_cursor or prev_cursor from a previous call."),
      from: z.enum(["start", "end"]).default("start").describe("Where to begin when no cursor is given."),
      limit: z.number().int().min(1).max(500).default(50),
      max_chars: z.number().int().min(100).max(100_000).default(4000).describe("Longer messages are cut (truncated: true)."),
    })
    .strict(),
  output: z.object({
    conversation: conversation.extend({ model_usage: z.record(z.string(), usageSchema) }),
    items: z.array(
      z.object({ index: z.number(), role: z.enum(["user", "assistant"]), text: z.string(), truncated: z.boolean().optional(), time: z.string().nullable(), tools: z.array(toolCall).optional() }),
    ),
    next_cursor: z.string().nullable(),
    prev_cursor: z.string().nullable(),
    has_more_after: z.boolean(),
    has_more_before: z.boolean(),
    ...indexState,
  }),
  annotations: readOnly,
  handler: ({ history }, args) => history.getConversation(args),
});

export const searchConversationsTool = def({
  name: "search_conversations",
  title: "Search Claude Code conversations",
  description:
    'Full-text search over every conversation in Claude Code\'s transcripts. Words and "quoted phrases"; each must appear in the same message. Works for English, Japanese and Chinese (no spaces needed). Each hit carries `resume` {claude_session_id, cwd} for resume_session.',
  input: z
    .object({
      query: z.string().min(1).max(1000),
      cwd: z.string().min(1).max(4096).optional(),
      since: date("Only messages at or after this time").optional(),
      until: date("Only messages at or before this time").optional(),
      limit: z.number().int().min(1).max(200).default(20),
    })
    .strict(),
  output: z.object({
    results: z.array(
      z.object({
        claude_session_id: z.string(),
        cwd: z.string().nullable(),
        title: z.string().nullable(),
        last_activity: z.string().nullable(),
        score: z.number(),
        matches: z.number(),
        snippet: z.string(),
        item: z.object({ index: z.number(), role: z.string(), time: z.string().nullable() }),
        resume: z.object({ claude_session_id: z.string(), cwd: z.string().nullable() }),
      }),
    ),
    terms: z.array(z.string()),
    examined: z.number(),
    more_matches: z.boolean(),
    ...indexState,
  }),
  annotations: readOnly,
  handler: ({ history }, args) => history.searchConversations(args),
});

const execution = z.object({
  id: z.number(),
  session_id: z.string(),
  claude_session_id: z.string().nullable(),
  prompt: z.string(),
  response: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string(),
  duration_ms: z.number(),
  outcome: z.enum(OUTCOMES),
  error: z.string().nullable(),
  usage: usageSchema.nullable(),
  cost_usd: z.number().nullable(),
});

export const getExecutionHistoryTool = def({
  name: "get_execution_history",
  title: "Turns this server ran",
  description: "The prompts this server sent and how each turn ended (response, start, end, duration, outcome, usage), newest first.",
  input: z
    .object({
      limit: z.number().int().min(1).max(10_000).default(50),
      session_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/).optional().describe("Only this session's turns."),
    })
    .strict(),
  output: z.object({ executions: z.array(execution), total_count: z.number() }),
  annotations: readOnly,
  handler: ({ executions }, args) => executions.list(args),
});

export const clearExecutionHistoryTool = def({
  name: "clear_execution_history",
  title: "Clear this server's turn history",
  description: "Deletes this server's record of turns (all, or one session's). Claude Code's own transcripts are not touched.",
  input: z
    .object({ session_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/).optional() })
    .strict(),
  output: z.object({ cleared_count: z.number() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ executions }, args) => ({ cleared_count: executions.clear(args) }),
});

export const historyTools = [listConversationsTool, getConversationTool, searchConversationsTool, getExecutionHistoryTool, clearExecutionHistoryTool] as const;

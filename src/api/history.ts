/**
 * Schemas of the history tools: conversations in Claude Code's transcripts (list, read, search) and this
 * server's own record of the turns it ran (get, clear).
 */
import { z } from "zod";
import { nodeName, sessionId } from "./common.js";

/**
 * How a recorded turn ended: completed, failed (an API error, StopFailure), interrupted, died (the process ended
 * mid-turn), start_failed (the session never took prompts), error; and for a send_message/run_task wait:
 * timed_out (the wait ended first; the turn goes on and gets its own record when it ends) or cancelled.
 */
export const EXECUTION_OUTCOMES = [
  "completed",
  "failed",
  "interrupted",
  "timed_out",
  "cancelled",
  "error",
  "died",
  "start_failed",
  "refused",
] as const;

const date = (what: string) => z.string().min(1).max(64).describe(`${what} (ISO 8601, e.g. 2026-11-01 or 2026-11-01T09:00:00Z).`);
export const claudeSessionIdArg = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, "a Claude session id has only letters, digits, '-' and '_'");

/** Tokens with cache writes split by lifetime (5 minutes, 1 hour), as the transcripts report them. */
export const historyUsage = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  cache_creation_5m_input_tokens: z.number(),
  cache_creation_1h_input_tokens: z.number(),
  cache_read_input_tokens: z.number(),
});

/** On a row from another machine (a coordinator's answer): the node whose history it is (absent: this machine). */
const rowNode = { node: z.string().optional().describe("The node it is from (absent: this machine).") };

/**
 * With nodes configured: each node's part in a merged answer. A node that did not answer is left out of the rows
 * and named here (status unreachable or connecting, error why); the call never fails for it.
 */
const nodesAnswered = {
  nodes: z
    .array(
      z.strictObject({
        name: z.string(),
        status: z.enum(["reachable", "connecting", "unreachable"]),
        error: z.string().optional(),
      }),
    )
    .optional()
    .describe("With nodes configured: each node's answer (this machine is not listed)."),
};

const indexState = {
  indexing: z
    .boolean()
    .describe("True while the transcript index is being built or rebuilt: the answer covers what is indexed so far."),
  complete_at: z.string().nullable(),
  files_read: z.number().optional(),
  bytes_read: z.number().optional(),
};

export const conversationInfo = z.object({
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
  usage: historyUsage,
  cost_usd: z.number().nullable(),
  cost_complete: z.boolean().describe("false: cost_usd leaves out the tokens of unpriced_models (a lower bound)."),
  unpriced_models: z.array(z.string()),
  session_id: z.string().optional().describe("The session of this server that runs or ran this conversation."),
  ...rowNode,
});

export const listConversationsInput = z
  .object({
    cwd: z.string().min(1).max(4096).optional().describe("Only conversations run in this directory."),
    since: date("Only conversations active at or after this time").optional(),
    until: date("Only conversations active at or before this time").optional(),
    limit: z.number().int().min(1).max(10_000).default(50),
    cursor: z.string().max(512).optional().describe("next_cursor from a previous call."),
  })
  .strict();

export const listConversationsOutput = z.object({
  conversations: z.array(conversationInfo),
  next_cursor: z.string().nullable(),
  total: z.number(),
  ...indexState,
  ...nodesAnswered,
});

const toolCall = z.object({ name: z.string(), input: z.string() });

export const getConversationInput = z
  .object({
    claude_session_id: claudeSessionIdArg,
    node: nodeName
      .optional()
      .describe('Where it ran (a listed row\'s node; "local": here). Default: here, else the node that has it.'),
    cursor: z.string().max(512).optional().describe("next_cursor or prev_cursor from a previous call."),
    from: z.enum(["start", "end"]).default("start").describe("Where to begin when no cursor is given."),
    limit: z.number().int().min(1).max(500).default(50),
    max_chars: z.number().int().min(100).max(100_000).default(4000).describe("Longer messages are cut (truncated: true)."),
  })
  .strict();

export const getConversationOutput = z.object({
  conversation: conversationInfo.extend({ model_usage: z.record(z.string(), historyUsage) }),
  items: z.array(
    z.object({
      index: z.number(),
      role: z.enum(["user", "assistant"]),
      text: z.string(),
      truncated: z.boolean().optional(),
      time: z.string().nullable(),
      tools: z.array(toolCall).optional(),
      uuid: z.string().optional().describe("resume_session resume_at"),
    }),
  ),
  next_cursor: z.string().nullable(),
  prev_cursor: z.string().nullable(),
  has_more_after: z.boolean(),
  has_more_before: z.boolean(),
  ...indexState,
});

export const searchConversationsInput = z
  .object({
    query: z.string().min(1).max(1000).describe('Words and "quoted phrases"; every one must appear in the same message.'),
    cwd: z.string().min(1).max(4096).optional(),
    since: date("Only messages at or after this time").optional(),
    until: date("Only messages at or before this time").optional(),
    limit: z.number().int().min(1).max(200).default(20),
  })
  .strict();

export const searchConversationsOutput = z.object({
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
      resume: z.object({ claude_session_id: z.string(), cwd: z.string().nullable() }).describe("Arguments for resume_session."),
      ...rowNode,
    }),
  ),
  terms: z.array(z.string()),
  examined: z.number(),
  more_matches: z.boolean(),
  ...indexState,
  ...nodesAnswered,
});

export const execution = z.object({
  id: z.number(),
  session_id: z.string(),
  claude_session_id: z.string().nullable(),
  prompt: z.string(),
  response: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string(),
  duration_ms: z.number(),
  outcome: z.enum(EXECUTION_OUTCOMES),
  error: z.string().nullable(),
  usage: historyUsage.nullable(),
  cost_usd: z.number().nullable(),
  cost_complete: z.boolean().describe("false: a model of the turn has no price, so cost_usd is a lower bound (or null)."),
  ...rowNode,
});

export const getExecutionsInput = z
  .object({
    limit: z.number().int().min(1).max(10_000).default(50),
    session_id: sessionId.optional().describe("Only this session's turns."),
  })
  .strict();

export const getExecutionsOutput = z.object({ executions: z.array(execution), total_count: z.number(), ...nodesAnswered });

export const clearExecutionsInput = z
  .object({ session_id: sessionId.optional().describe("Only this session's turns (default: all).") })
  .strict();

export const clearExecutionsOutput = z.object({ cleared_count: z.number() });

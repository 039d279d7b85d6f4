/** The history tools: conversations in Claude Code's transcripts, and this server's record of the turns it ran. */
import * as api from "../../api/index.js";
import { defineTool } from "../tool.js";

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const listConversations = defineTool({
  name: "list_conversations",
  title: "List Claude Code conversations",
  description:
    "Lists conversations from Claude Code's transcripts (any session, not only this server's), newest activity first, with title, cwd, turns, models, " +
    "token usage and cost, and session_id when a session of this server runs or ran it. Pass next_cursor back for more. indexing: true means the index is still being built.",
  input: api.listConversationsInput,
  output: api.listConversationsOutput,
  annotations: readOnly,
  handler: (svc, args) => svc.history.listConversations(args),
});

export const getConversation = defineTool({
  name: "get_conversation",
  title: "Read a Claude Code conversation",
  description:
    "The messages of one conversation (user prompts, assistant replies, tool calls summarised), a page at a time: from the start (default) or the end, then next_cursor to read on and prev_cursor to read back.",
  input: api.getConversationInput,
  output: api.getConversationOutput,
  annotations: readOnly,
  handler: (svc, args) => svc.history.getConversation(args),
});

export const searchConversations = defineTool({
  name: "search_conversations",
  title: "Search Claude Code conversations",
  description:
    'Full-text search over every conversation in Claude Code\'s transcripts. Words and "quoted phrases"; each must appear in the same message. ' +
    "Works for English, Japanese and Chinese (no spaces needed). Each hit carries `resume` {claude_session_id, cwd}: pass it to resume_session to continue that conversation.",
  input: api.searchConversationsInput,
  output: api.searchConversationsOutput,
  annotations: readOnly,
  handler: async (svc, args) => svc.history.searchConversations(args),
});

export const getExecutionHistory = defineTool({
  name: "get_execution_history",
  title: "Turns this server ran",
  description: "The prompts this server's sessions ran and how each turn ended (response, start, end, duration, outcome, usage, cost), newest first.",
  input: api.getExecutionsInput,
  output: api.getExecutionsOutput,
  annotations: readOnly,
  handler: async (svc, args) => svc.history.getExecutions(args),
});

export const clearExecutionHistory = defineTool({
  name: "clear_execution_history",
  title: "Clear this server's turn history",
  description: "Deletes this server's record of turns (all, or one session's) and returns cleared_count. Claude Code's own transcripts are not touched.",
  input: api.clearExecutionsInput,
  output: api.clearExecutionsOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (svc, args) => svc.history.clearExecutions(args),
});

export const HISTORY_TOOLS = [listConversations, getConversation, searchConversations, getExecutionHistory, clearExecutionHistory] as const;

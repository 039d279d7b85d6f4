/** The history tools: conversations in Claude Code's transcripts, and this server's record of the turns it ran. */
import * as api from "../../api/index.js";
import { defineTool } from "../tool.js";

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const listConversations = defineTool({
  name: "list_conversations",
  title: "List Claude Code conversations",
  description:
    "Claude Code conversations from its transcripts (any session), newest first, with title, cwd, turns, usage, cost " +
    "and this server's session_id if any. Pass next_cursor for more.",
  input: api.listConversationsInput,
  output: api.listConversationsOutput,
  annotations: readOnly,
  toolset: "history",
  route: "history",
  handler: (svc, args) => svc.history.listConversations(args),
});

export const getConversation = defineTool({
  name: "get_conversation",
  title: "Read a Claude Code conversation",
  description: "One conversation's messages, a page at a time from the start or the end; next_cursor and prev_cursor page on.",
  input: api.getConversationInput,
  output: api.getConversationOutput,
  annotations: readOnly,
  toolset: "history",
  route: "history",
  handler: (svc, args) => svc.history.getConversation(args),
});

export const searchConversations = defineTool({
  name: "search_conversations",
  title: "Search Claude Code conversations",
  description:
    "Full-text search over Claude Code's transcripts: words and \"phrases\" in one message (CJK too). A hit's resume " +
    "{claude_session_id, cwd} goes to resume_session.",
  input: api.searchConversationsInput,
  output: api.searchConversationsOutput,
  annotations: readOnly,
  toolset: "history",
  route: "history",
  handler: async (svc, args) => svc.history.searchConversations(args),
});

export const getExecutionHistory = defineTool({
  name: "get_execution_history",
  title: "Turns this server ran",
  description:
    "The prompts this server's sessions ran and how each turn ended (response, times, outcome, usage, cost), newest first.",
  input: api.getExecutionsInput,
  output: api.getExecutionsOutput,
  annotations: readOnly,
  toolset: "history",
  route: "history",
  handler: async (svc, args) => svc.history.getExecutions(args),
});

export const clearExecutionHistory = defineTool({
  name: "clear_execution_history",
  title: "Clear this server's turn history",
  description: "Deletes this server's turn records (all, or one session's). Claude Code's transcripts stay.",
  input: api.clearExecutionsInput,
  output: api.clearExecutionsOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  toolset: "history",
  route: "session",
  handler: async (svc, args) => svc.history.clearExecutions(args),
});

export const HISTORY_TOOLS = [
  listConversations,
  getConversation,
  searchConversations,
  getExecutionHistory,
  clearExecutionHistory,
] as const;

import type { Tool } from "../tool.js";
import { configureTool } from "./configure.js";
import { healthCheck } from "./health-check.js";
import { HISTORY_TOOLS } from "./history.js";
import { interruptSession } from "./core/interrupt-session.js";
import { killSession } from "./core/kill-session.js";
import { listSessions } from "./core/list-sessions.js";
import { respondPermission } from "./core/respond-permission.js";
import { answerPrompt } from "./core/answer-prompt.js";
import { resumeSession } from "./core/resume-session.js";
import { compactSession, resetSession } from "./reset-session.js";
import { runTask } from "./core/run-task.js";
import { sendMessage } from "./core/send-message.js";
import { startSession } from "./core/start-session.js";
import { streamOutputTool } from "./core/stream-output.js";
import { waitForCompletion } from "./core/wait-for-completion.js";
import { broadcastMessage } from "./broadcast-message.js";
import { waitForSessions } from "./wait-for-sessions.js";
import { syncContextTool } from "./sync-context.js";
import { SCHEDULE_TOOLS } from "./schedules.js";
import { fanOutTool } from "./fan-out.js";
import { mergeWorktreeTool } from "./merge-worktree.js";
import { moveSession, transferSession } from "./move-session.js";

/**
 * Every tool of tools/list, in the listing's order: a new tool is its file and one line here (its declaration says
 * its toolset and its route across nodes). `as const` keeps each tool's name and schemas for the typed test client.
 */
export const TOOL_LIST = [
  startSession,
  resumeSession,
  resetSession,
  compactSession,
  killSession,
  listSessions,
  sendMessage,
  waitForCompletion,
  streamOutputTool,
  respondPermission,
  answerPrompt,
  interruptSession,
  healthCheck,
  configureTool,
  ...HISTORY_TOOLS,
  broadcastMessage,
  waitForSessions,
  syncContextTool,
  runTask,
  ...SCHEDULE_TOOLS,
  fanOutTool,
  mergeWorktreeTool,
  moveSession,
  transferSession,
] as const;

export const TOOLS: readonly Tool[] = TOOL_LIST;

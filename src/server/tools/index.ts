import type { Tool } from "../tool.js";
import { configureTool } from "./configure.js";
import { healthCheck } from "./health-check.js";
import { HISTORY_TOOLS } from "./history.js";
import { interruptSession } from "./interrupt-session.js";
import { killSession } from "./kill-session.js";
import { listSessions } from "./list-sessions.js";
import { respondPermission } from "./respond-permission.js";
import { answerPrompt } from "./answer-prompt.js";
import { resumeSession } from "./resume-session.js";
import { compactSession, resetSession } from "./reset-session.js";
import { runTask } from "./run-task.js";
import { sendMessage } from "./send-message.js";
import { startSession } from "./start-session.js";
import { streamOutputTool } from "./stream-output.js";
import { waitForCompletion } from "./wait-for-completion.js";
import { broadcastMessage } from "./broadcast-message.js";
import { waitForSessions } from "./wait-for-sessions.js";
import { syncContextTool } from "./sync-context.js";
import { fanOutTool } from "./fan-out.js";
import { mergeWorktreeTool } from "./merge-worktree.js";

export const TOOLS: readonly Tool[] = [
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
  fanOutTool,
  mergeWorktreeTool,
];

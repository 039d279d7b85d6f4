import type { Tool } from "../tool.js";
import { interruptSession } from "./interrupt-session.js";
import { killSession } from "./kill-session.js";
import { listSessions } from "./list-sessions.js";
import { respondPermission } from "./respond-permission.js";
import { resumeSession } from "./resume-session.js";
import { runTask } from "./run-task.js";
import { sendMessage } from "./send-message.js";
import { startSession } from "./start-session.js";
import { streamOutputTool } from "./stream-output.js";
import { waitForCompletion } from "./wait-for-completion.js";

export const TOOLS: readonly Tool[] = [
  startSession,
  resumeSession,
  killSession,
  listSessions,
  sendMessage,
  waitForCompletion,
  streamOutputTool,
  respondPermission,
  interruptSession,
  runTask,
];

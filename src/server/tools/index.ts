import { interruptSession } from "./interrupt-session.js";
import { killSession } from "./kill-session.js";
import { listSessions } from "./list-sessions.js";
import { respondPermission } from "./respond-permission.js";
import { resumeSession } from "./resume-session.js";
import { sendMessage } from "./send-message.js";
import { startSession } from "./start-session.js";
import { streamOutput } from "./stream-output.js";
import { waitForCompletion } from "./wait-for-completion.js";
import type { ToolDef } from "../tool.js";

export const TOOLS: ToolDef[] = [
  startSession,
  resumeSession,
  killSession,
  listSessions,
  sendMessage,
  waitForCompletion,
  streamOutput,
  respondPermission,
  interruptSession,
] as unknown as ToolDef[];

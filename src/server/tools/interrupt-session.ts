import { z } from "zod";
import { defineTool } from "../tool.js";
import { sessionId, timeoutMs } from "./common.js";

export const interruptSession = defineTool({
  name: "interrupt_session",
  title: "Interrupt a session's turn",
  description: "Presses Esc in the session to stop the running turn (Claude fires no hook for that, so the screen confirms it).",
  input: z.object({ session_id: sessionId, timeout_ms: timeoutMs(5000, 60_000) }).strict(),
  output: z.looseObject({ session_id: z.string(), interrupted: z.boolean(), status: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (orch, args, ctx) => orch.interrupt(args, ctx) as never,
});

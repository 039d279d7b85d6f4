import { z } from "zod";
import { defineTool } from "../tool.js";
import { sessionId, timeoutMs, turnFields } from "./common.js";

export const waitForCompletion = defineTool({
  name: "wait_for_completion",
  title: "Wait for a session's turn to end",
  description:
    "Waits until the session's current turn ends, a permission prompt opens, or the process exits. Wakes on hook events (no polling), " +
    "sends progress notifications while waiting, and stops when the request is cancelled.",
  input: z.object({ session_id: sessionId, timeout_ms: timeoutMs(300_000, 24 * 3_600_000) }).strict(),
  output: z.looseObject({ session_id: z.string(), last_response: z.string().optional(), ...turnFields }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (orch, args, ctx) => orch.wait(args, ctx) as never,
});

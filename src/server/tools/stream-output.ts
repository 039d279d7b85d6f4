import { z } from "zod";
import { defineTool } from "../tool.js";
import { sessionId, timeoutMs } from "./common.js";

export const streamOutput = defineTool({
  name: "stream_output",
  title: "Read a session's output",
  description:
    "mode screen: the visible terminal. mode log: the raw terminal output (ANSI stripped) since a cursor. mode transcript: the conversation " +
    "from Claude's transcript since a cursor. Pass back the returned cursor to get only what is new; with follow, waits for new output.",
  input: z
    .object({
      session_id: sessionId,
      mode: z.enum(["screen", "log", "transcript"]).default("screen"),
      cursor: z.string().max(32).optional().describe("The cursor a previous call returned."),
      lines: z.number().int().min(1).max(10000).optional().describe("Without a cursor: only the last N lines / items."),
      follow: z.boolean().default(false),
      timeout_ms: timeoutMs(30_000, 600_000),
    })
    .strict(),
  output: z.looseObject({
    session_id: z.string(),
    mode: z.string(),
    text: z.string().optional(),
    items: z.array(z.looseObject({ role: z.string(), text: z.string() })).optional(),
    cursor: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (orch, args, ctx) => orch.stream(args, ctx) as never,
});

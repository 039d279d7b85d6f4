import { z } from "zod";
import { defineTool } from "../tool.js";

export const listSessions = defineTool({
  name: "list_sessions",
  title: "List Claude Code sessions",
  description: "Lists sessions with their status (checked against tmux in one call), backend, and any pending permission prompt.",
  input: z
    .object({
      status_filter: z.enum(["all", "active", "inactive", "error"]).default("all"),
      team_filter: z.string().max(200).optional(),
      limit: z.number().int().min(0).max(100000).optional(),
      include_metadata: z.boolean().default(false).describe("Return the whole stored record of each session."),
    })
    .strict(),
  output: z.looseObject({
    sessions: z.array(z.looseObject({ session_id: z.string(), status: z.string(), backend: z.string() })),
    total_count: z.number(),
    filtered_count: z.number(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (orch, args) => orch.list(args) as never,
});

import { waitManyInput, waitManyOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const waitForSessions = defineTool({
  name: "wait_for_sessions",
  title: "Wait for several sessions",
  description:
    "Waits until the first (any) or every (all) session of a team (or session_ids) ends its turn, needs an answer or " +
    "exits; returns each one's state and last response.",
  input: waitManyInput,
  output: waitManyOutput,
  // Like wait_for_completion, it may record an Esc typed in an attached pane.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "teams",
  route: "group",
  handler: (svc, args, ctx) => svc.waitMany(args, ctx),
});

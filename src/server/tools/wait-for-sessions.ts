import { waitManyInput, waitManyOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const waitForSessions = defineTool({
  name: "wait_for_sessions",
  title: "Wait for several sessions",
  description:
    "Waits until the first (mode any) or every (mode all) session of a team (or of session_ids) has ended its current turn, needs a permission " +
    "answer, or exited; returns each one's state and last response. Wakes on hook events (no polling), sends progress, stops when cancelled.",
  input: waitManyInput,
  output: waitManyOutput,
  // Like wait_for_completion, it may record an Esc typed in an attached pane.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (svc, args, ctx) => svc.waitMany(args, ctx),
});

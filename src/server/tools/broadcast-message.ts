import { broadcastInput, broadcastOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const broadcastMessage = defineTool({
  name: "broadcast_message",
  title: "Send one prompt to a team",
  description:
    "Sends one prompt to every live session of a team (or session_ids), once each, and by default waits for all replies. " +
    "One result per session; a member's failure does not fail the call.",
  input: broadcastInput,
  output: broadcastOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "teams",
  route: "group",
  handler: (svc, args, ctx) => svc.broadcast(args, ctx),
});

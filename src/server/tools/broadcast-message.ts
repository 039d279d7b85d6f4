import { broadcastInput, broadcastOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const broadcastMessage = defineTool({
  name: "broadcast_message",
  title: "Send one prompt to a team",
  description:
    "Delivers the same prompt to every live session of a team (or to the listed session_ids), in parallel and exactly once each, and by default " +
    "waits for every reply. Returns one result per session (sent, response, final state, or that session's own error); one member's failure " +
    "never fails the call. One progress stream while it waits; cancellable.",
  input: broadcastInput,
  output: broadcastOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (svc, args, ctx) => svc.broadcast(args, ctx),
});

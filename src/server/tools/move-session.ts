import { moveInput, moveOutput, transferInput, transferOutput } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import { defineTool } from "../tool.js";

export const moveSession = defineTool({
  name: "move_session",
  title: "Move a session to another node",
  description:
    "Carries an idle or hibernated session's conversation to another node (hibernated first); it is hibernated there " +
    "under the same id and wakes on the next prompt. Not with a worktree.",
  input: moveInput,
  output: moveOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  toolset: "admin",
  route: "move",
  // Only a coordinator of nodes moves sessions (src/nodes/move.ts); a server without nodes has nowhere to move them.
  handler: () =>
    Promise.reject(
      new SessionError("INVALID_ARGUMENT", "this server has no nodes to move a session to.", {
        suggestion: "Configure nodes (CLAUDE_SESSIONS_NODES or <state>/nodes.json; see docs/nodes.md).",
      }),
    ),
});

export const transferSession = defineTool({
  name: "transfer_session",
  title: "A step of a move (coordinators only)",
  description: "Used by a coordinator's move_session on each machine; call move_session instead.",
  input: transferInput,
  output: transferOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  toolset: "admin",
  route: "local",
  handler: (svc, args) => svc.transfer(args),
});

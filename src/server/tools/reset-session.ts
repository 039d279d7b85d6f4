import { compactInput, compactOutput, resetInput, resetOutput } from "../../api/index.js";
import { defineTool } from "../tool.js";

export const resetSession = defineTool({
  name: "reset_session",
  title: "Reset a session's conversation",
  description: "/clear in an idle session: a fresh conversation, same session; the old one stays resumable.",
  input: resetInput,
  output: resetOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  toolset: "context",
  route: "session",
  handler: (svc, args, ctx) => svc.reset(args, ctx),
});

export const compactSession = defineTool({
  name: "compact_session",
  title: "Compact a session's conversation",
  description: "/compact in an idle session: its conversation summarised to free context.",
  input: compactInput,
  output: compactOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  toolset: "context",
  route: "session",
  handler: (svc, args, ctx) => svc.compact(args, ctx),
});

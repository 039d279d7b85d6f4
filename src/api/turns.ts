/** Schemas of the tools that talk to a running session: prompts, waits, permission answers, interrupts, output. */
import { z } from "zod";
import {
  addressFields,
  blockedKind,
  idempotencyField,
  nodeField,
  sessionTotalFields,
  status,
  timeoutMs,
  turnFields,
  wokeFields,
} from "./common.js";
import { turnFigureFields } from "./headless.js";

/** A Claude Code background session's short id, as `claude agents --json` prints it (never an option: no leading "-"). */
const nativeSessionId = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
    "a background session id has only letters, digits, '-' and '_', and starts with a letter or digit",
  );

export const sendInput = z
  .object({
    ...addressFields,
    native_session_id: nativeSessionId.optional().describe("Or a background one (list_sessions include_native)."),
    message: z.string().describe("Control characters and a leading '!' are refused."),
    wait_for_response: z.boolean().default(true),
    wait_for_usage: z.boolean().default(false).describe("Also wait for the turn's usage and cost (else usage_pending)."),
    timeout_ms: timeoutMs(30_000),
    queue: z.boolean().default(false).describe("If busy, run it after the turn."),
    bash_mode: z.boolean().default(false).describe("A shell command (CLAUDE_SESSIONS_ALLOW_BASH_MODE=1)."),
    include_context: z.boolean().default(false).describe("Prefix changes since sync_context."),
    ...idempotencyField,
  })
  .strict();

export const sendOutput = z.strictObject({
  session_id: z.string(),
  native_session_id: z.string().optional().describe("The background session the prompt went to (native_session_id calls)."),
  delivered_via: z
    .enum(["attach", "resume"])
    .optional()
    .describe(
      "native_session_id calls: typed through `claude attach`, or a stopped session continued with `claude --bg --resume`.",
    ),
  note: z.string().optional(),
  message_sent: z.boolean(),
  sent_at: z.string(),
  queued: z.boolean().optional(),
  bash_mode: z.boolean().optional(),
  response: z.string().optional(),
  responded_at: z.string().optional(),
  final_state: z.string(),
  completed: turnFields.completed.optional(),
  timed_out: turnFields.timed_out.optional(),
  waited_ms: turnFields.waited_ms.optional(),
  turn_outcome: turnFields.turn_outcome,
  error: turnFields.error,
  pending_permission: turnFields.pending_permission,
  blocked: turnFields.blocked,
  background_tasks: turnFields.background_tasks,
  needs_input: turnFields.needs_input,
  sandbox_violations: turnFields.sandbox_violations,
  usage: turnFields.usage,
  model_usage: turnFields.model_usage,
  cost_usd: turnFields.cost_usd,
  cost_complete: turnFields.cost_complete,
  usage_pending: z
    .boolean()
    .optional()
    .describe(
      "true: the reply came at the turn's end, before its usage line; usage, cost and totals follow in a `usage` notification.",
    ),
  ...sessionTotalFields,
  ...turnFigureFields,
  ...wokeFields,
  ...nodeField,
});

export const waitInput = z
  .object({
    ...addressFields,
    timeout_ms: timeoutMs(300_000, 24 * 3_600_000),
    poll_interval_ms: z.number().int().min(0).max(3_600_000).optional().describe("Ignored (waits wake on hook events)."),
    check_idle: z.boolean().default(false).describe("Also wait for background tasks."),
  })
  .strict();

export const waitOutput = z.strictObject({
  session_id: z.string(),
  last_response: z.string().optional(),
  completed_at: z.string().optional().describe("When the wait saw the turn end (completed only)."),
  ...turnFields,
  ...nodeField,
});

export const permissionDecision = z.enum(["allow", "allow_always", "deny"]);

export const respondInput = z
  .object({
    ...addressFields,
    decision: permissionDecision,
    message: z.string().max(10_000).optional().describe("deny: the reason Claude is told."),
    updated_input: z.record(z.string(), z.unknown()).optional().describe("allow: tool input to run instead."),
  })
  .strict();

export const respondOutput = z.strictObject({
  session_id: z.string(),
  answered: z.boolean(),
  decision: permissionDecision,
  tool_name: z.string(),
  status,
  ...nodeField,
});

export const answerPromptInput = z
  .object({
    ...addressFields,
    choice: z.union([z.number().int().min(1).max(9), z.string().min(1).max(200)]).describe("A label or 1-based number."),
  })
  .strict();

export const answerPromptOutput = z.strictObject({
  session_id: z.string(),
  answered: z.boolean(),
  kind: blockedKind,
  choice: z.string().describe("The label of the choice that was pressed."),
  status,
});

export const interruptInput = z.object({ ...addressFields, timeout_ms: timeoutMs(5000, 60_000) }).strict();

export const interruptOutput = z.strictObject({ session_id: z.string(), interrupted: z.boolean(), status, ...nodeField });

export const streamInput = z
  .object({
    ...addressFields,
    mode: z.enum(["screen", "log", "transcript"]).default("screen"),
    cursor: z.string().max(32).optional(),
    lines: z.number().int().min(1).max(10000).optional().describe("No cursor: the last N lines/items."),
    follow: z.boolean().default(false),
    timeout_ms: timeoutMs(30_000, 600_000),
  })
  .strict();

export const transcriptItem = z.strictObject({
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  timestamp: z.string().optional(),
  uuid: z.string().optional(),
});

export const streamOutput = z.strictObject({
  session_id: z.string(),
  mode: z.enum(["screen", "log", "transcript"]),
  text: z.string().optional(),
  items: z.array(transcriptItem).optional(),
  cursor: z.string().optional(),
  status: status.optional(),
  ...nodeField,
});

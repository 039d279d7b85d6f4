/** Pieces shared by the tool schemas. */
import { z } from "zod";
import { BACKEND_KINDS } from "../core/events.js";
import { BLOCKED_KINDS, STATUSES } from "../core/status.js";
import { turnFigureFields } from "./headless.js";

export const sessionId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "a session id has only letters, digits, '-' and '_'")
  .describe("The id start_session returned.");

/** A team or teammate name is shown in lists, prompts and terminals: no control characters (C0, DEL, C1). */
const NO_CONTROLS = /^[^\x00-\x1f\x7f-\x9f]*$/;
const CONTROLS_MSG = "a name has no control characters (C0, DEL or C1)";
export const teamName = z.string().min(1).max(200).regex(NO_CONTROLS, CONTROLS_MSG);
export const teammateName = z.string().min(1).max(200).regex(NO_CONTROLS, CONTROLS_MSG).describe("Its name in team_name.");

/**
 * How a tool names one session: session_id, or team_name + teammate_name (resolved in one place,
 * src/sessions/teams/team.ts). Exactly one of the two forms.
 */
export const addressFields = {
  session_id: sessionId.optional().describe("Or team_name + teammate_name."),
  team_name: teamName.optional(),
  teammate_name: teammateName.optional(),
};

export const status = z.enum(STATUSES);

/** A node's name in the coordinator's nodes.json ("local" is this machine; "auto" picks one). */
export const nodeName = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, "a node name has lowercase letters, digits, '-' and '_'");

/** On results and list rows: the node the session runs on (absent: this machine). */
export const nodeField = {
  node: z.string().optional().describe('The node the session runs on (absent or "local": this machine).'),
};

/** On the results of calls that send a prompt: the session was hibernated and this call woke it. */
export const wokeFields = {
  woke: z.literal(true).optional().describe("This call woke the hibernated session first."),
  wake_ms: z.number().optional(),
};

export const timeoutMs = (dflt: number, max = 3_600_000) => z.number().int().min(0).max(max).default(dflt);

export const backend = z.enum(BACKEND_KINDS).describe("tmux: attachable, survives restarts; headless: Agent SDK.");

const dopplerName = z
  .string()
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/,
    "a Doppler name has letters, digits, '_', '.' and '-', and does not start with '-' or '.'",
  );

export const doppler = z
  .object({
    project: dopplerName.optional().describe("Default: DOPPLER_PROJECT."),
    config: dopplerName.optional().describe("Default: DOPPLER_CONFIG."),
  })
  .strict()
  .describe("{project?, config?}: under `doppler run`.");

export const env = z.record(z.string(), z.string()).describe("Never stored; PATH, LD_* need the operator.");

export const pendingPermission = z.object({
  tool_name: z.string(),
  tool_input: z.unknown(),
  suggestions: z
    .array(z.unknown())
    .optional()
    .describe("The CLI's permission suggestions: the rule(s) decision allow_always applies."),
});

export const blockedKind = z.enum(BLOCKED_KINDS);

export const blockedScreen = z
  .object({
    kind: blockedKind.describe(
      "auto_mode_unavailable (auto mode's classifier cannot be reached), plan_approval, question (AskUserQuestion's options), " +
        "mcp_server, trust, api_key, usage_limit, permission_dialog (a dialog no hook reported), bypass_warning, or unknown " +
        "(a screen the server does not know).",
    ),
    text: z.string().describe("What the screen says (brief)."),
    choices: z
      .array(z.string())
      .describe(
        "Its choices in screen order: answer_prompt takes one by label or 1-based number. Empty when the server cannot tell them.",
      ),
    since: z.string().optional(),
  })
  .describe(
    "A screen of Claude Code that waits for an answer (status blocked): answer it with answer_prompt, or interrupt_session.",
  );

export const turnOutcome = z.enum(["completed", "failed", "interrupted"]);

/** Tokens of a turn (or a session), as the API reports them. Each API message counts once. */
export const usage = z.strictObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  cache_read_input_tokens: z.number(),
});

/** What a turn cost, for every backend (headless: the Agent SDK's figures; tmux/pty: the transcript's). */
export const turnCostFields = {
  usage: usage.optional().describe("Tokens of the turn that ended (each API message once, sub-agents included)."),
  model_usage: z.record(z.string(), usage).optional().describe("The same, per model."),
  cost_usd: z
    .number()
    .nullable()
    .optional()
    .describe("What the turn cost in USD; null when no model's price is known (never a guess)."),
  cost_complete: z
    .boolean()
    .optional()
    .describe(
      "false: a model of the turn has no price (the built-in table or CLAUDE_SESSIONS_PRICES), so cost_usd leaves its tokens out and is a lower bound.",
    ),
};

/** The session's totals after the turn, on every turn result (send_message, wait_for_completion, run_task). */
export const sessionTotalFields = {
  session_usage: usage.optional().describe("Tokens of the whole session so far, this turn included."),
  session_cost_usd: z
    .number()
    .nullable()
    .optional()
    .describe("What the whole session has cost so far in USD (null when no model's price is known)."),
  session_cost_complete: z
    .boolean()
    .optional()
    .describe("false: session_cost_usd leaves out tokens of a model without a price (a lower bound)."),
  session_turns: z.number().optional().describe("Turns the session has ended so far, this one included."),
};

/** A usage or rate limit the session's last turn hit (issue 33; docs/limits.md). */
export const limitShown = z.strictObject({
  resets_at: z
    .string()
    .describe("When the limit lifts; the server wakes the session after it (plus a jitter, spread over the fleet)."),
  limit_kind: z
    .string()
    .describe(
      "five_hour, seven_day (a plan's windows), rate (an API key's 429: no reset time is given, the server waits a minute), or other.",
    ),
  reset_known: z.boolean().describe("false: the CLI gave no reset time (an API key's 429) and resets_at is the server's guess."),
  message: z.string().describe("What the CLI said."),
  wake_at: z
    .string()
    .optional()
    .describe("When the server wakes the session and sends the interrupted prompt again (once, only if unanswered)."),
  account: z.string().optional(),
});

/** What a wait on a turn reports (send_message with wait_for_response, wait_for_completion). */
export const turnFields = {
  completed: z.boolean().describe("The turn ended and the session is idle."),
  timed_out: z.boolean(),
  waited_ms: z.number(),
  final_state: z.string().describe("The status when the call returned; `error` when the turn ended with an API error."),
  turn_outcome: turnOutcome.optional(),
  error: z.string().optional(),
  pending_permission: pendingPermission.optional().describe("The tool waiting for a permission answer (see respond_permission)."),
  blocked: blockedScreen.optional(),
  background_tasks: z.number().optional().describe("Background tasks still running when the turn ended."),
  needs_input: z
    .string()
    .optional()
    .describe(
      "Claude Code says it waits for the user (its agent_needs_input notification, e.g. auto mode's \"can't check\" screen).",
    ),
  sandbox_violations: z
    .number()
    .optional()
    .describe("Sandbox violations so far (refused connections, sentinels sent elsewhere)."),
  ...turnCostFields,
  ...sessionTotalFields,
  ...turnFigureFields,
};

/**
 * A retry's key (issue 31): the same key from the same caller for the same tool within 24 h returns the first call's
 * result instead of running it again. Printable ASCII without spaces; a UUID is a good one.
 */
export const idempotencyKey = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, "an idempotency_key is printable ASCII without spaces (a UUID is a good one)");

export const idempotencyField = { idempotency_key: idempotencyKey.optional() };

/**
 * start_session's sandbox (issue 32): true, false, or {allow_hosts} (narrows CLAUDE_SESSIONS_SANDBOX_HOSTS, never
 * widens it; entries checked by the session layer).
 */
export const sandboxOption = z.union([z.boolean(), z.strictObject({ allow_hosts: z.array(z.string()).max(64).optional() })]);

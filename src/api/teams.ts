/** Schemas of the team tools (broadcast, wait on many, context sync) and of the worktree options of start_session. */
import { z } from "zod";
import {
  addressFields,
  idempotencyField,
  nodeField,
  pendingPermission,
  sessionId,
  teamName,
  timeoutMs,
  turnFields,
  wokeFields,
} from "./common.js";

const dopplerName = z
  .string()
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/,
    "a Doppler name has letters, digits, '_', '.' and '-', and does not start with '-' or '.'",
  );

/** The design's flat names for `doppler: {project, config}` (either form; not both with different values). */
export const dopplerFlat = {
  doppler_project: dopplerName.optional().describe("Same as doppler.project."),
  doppler_config: dopplerName.optional().describe("Same as doppler.config."),
};

const gitRef = z
  .string()
  .min(1)
  .max(200)
  .regex(
    /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._\/-]+(?<![./])$/,
    "a git ref name has letters, digits, '.', '_', '/' and '-', and does not start with '-'",
  )
  .refine((v) => !v.endsWith(".lock"), "a git ref name does not end with .lock");

export const worktreeOption = z
  .union([
    z.boolean(),
    z.strictObject({
      branch: gitRef.optional().describe("The new branch (default cs/<session_id>)."),
      base: gitRef.optional().describe("Where the branch starts (default: the repository's HEAD)."),
    }),
  ])
  .describe("true or {branch?, base?}: worktree on branch cs/<id>.");

export const copyFiles = z.array(z.string().min(1).max(4096)).max(100).describe("Untracked files to copy in.");

export const setupCommand = z
  .union([z.array(z.string().max(10_000)).min(1).max(200), z.string().min(1).max(10_000)])
  .describe("Run once in the worktree: argv, or shell if allowed.");

/** A group of sessions: a team, or a list of ids. */
const groupFields = {
  team_name: teamName.optional().describe("Every live session of this team."),
  session_ids: z.array(sessionId).min(1).max(100).optional().describe("These sessions (instead of team_name)."),
};

export const broadcastInput = z
  .object({
    ...groupFields,
    message: z.string().describe("The prompt for every member."),
    wait_for_response: z.boolean().default(true),
    timeout_ms: timeoutMs(30_000),
    ...idempotencyField,
  })
  .strict();

export const memberResult = z.strictObject({
  session_id: z.string(),
  teammate_name: z.string().optional(),
  message_sent: z.boolean(),
  sent_at: z.string().optional(),
  response: z.string().optional(),
  final_state: z.string().optional(),
  completed: z.boolean().optional(),
  timed_out: z.boolean().optional(),
  pending_permission: pendingPermission.optional(),
  error: z
    .strictObject({ code: z.string(), message: z.string() })
    .optional()
    .describe("Why this member got nothing (or no answer)."),
  ...wokeFields,
  ...nodeField,
});

export const broadcastOutput = z.strictObject({
  team_name: z.string().optional(),
  results: z.array(memberResult),
  sent_count: z.number(),
  failed_count: z.number(),
});

export const waitManyInput = z
  .object({
    ...groupFields,
    mode: z.enum(["any", "all"]).default("all").describe("any: the first to end its turn; all: every one."),
    timeout_ms: timeoutMs(300_000, 24 * 3_600_000),
  })
  .strict();

export const waitManyOutput = z.strictObject({
  mode: z.enum(["any", "all"]),
  done: z.boolean().describe("The condition of mode was met (false: timed out)."),
  timed_out: z.boolean(),
  waited_ms: z.number(),
  sessions: z.array(
    z.strictObject({
      session_id: z.string(),
      teammate_name: z.string().optional(),
      done: z
        .boolean()
        .describe("Its turn ended, it needs a permission answer or a screen's answer (blocked), or its process ended."),
      final_state: turnFields.final_state,
      last_response: z.string().optional(),
      pending_permission: turnFields.pending_permission,
      blocked: turnFields.blocked,
      error: z.string().optional(),
      ...nodeField,
    }),
  ),
});

export const syncInput = z
  .object({
    ...addressFields,
    context_type: z.enum(["files", "env", "git", "all"]).default("all"),
    paths: z.array(z.string().min(1).max(4096)).max(100).optional().describe("Files to mention (default: git's changed files)."),
    force: z.boolean().default(false).describe("Send even when nothing changed since the last sync."),
    wait_for_response: z.boolean().default(true),
    timeout_ms: timeoutMs(30_000),
    ...idempotencyField,
  })
  .strict();

const syncFields = {
  session_id: z.string(),
  synced_at: z.string(),
  context_type: z.string(),
  sent: z.boolean().describe("A context prompt was delivered (false: nothing changed, or an error)."),
  files_synced: z.number().optional(),
  env_vars_synced: z.number().optional(),
  git_status_synced: z.boolean().optional(),
  warnings: z.array(z.string()).optional(),
  final_state: z.string().optional(),
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  ...wokeFields,
  ...nodeField,
};

export const syncResult = z.strictObject(syncFields);

export const syncOutput = z.strictObject({
  ...syncFields,
  session_id: z.string().optional(),
  results: z.array(syncResult).optional().describe("team_name without teammate_name: one result per live member."),
});

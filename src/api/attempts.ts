/** Schemas of the parallel-attempt tools (issue 34): fan_out (one prompt, n sessions, checked and ranked) and merge_worktree. */
import { z } from "zod";
import { PERMISSION_MODES } from "../core/modes.js";
import { backend, idempotencyField, sessionId, timeoutMs } from "./common.js";

const permissionMode = z.enum(PERMISSION_MODES);

export const fanOutVariant = z.strictObject({
  model: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\s\0]+$/)
    .optional(),
  permission_mode: permissionMode.optional(),
});

export const fanOutInput = z
  .object({
    cwd: z.string().min(1).max(4096).describe("In a git repository; its HEAD (clean) is the base."),
    prompt: z.string().min(1),
    n: z.number().int().min(1).max(64).optional().describe("Sessions (default 3; or one per variant)."),
    variants: z.array(fanOutVariant).min(1).max(64).optional().describe("One session each."),
    model: fanOutVariant.shape.model,
    permission_mode: permissionMode.optional(),
    backend: backend.optional().describe("Default: headless."),
    trust_workspace: z.boolean().optional().describe("Accept 'trust this folder' for the worktrees."),
    timeout_ms: timeoutMs(1_800_000, 24 * 3_600_000).describe("Deadline for all attempts."),
    ...idempotencyField,
  })
  .strict();

export const checkResult = z.strictObject({
  name: z.string(),
  passed: z.boolean(),
  exit_code: z.number().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number(),
  output_tail: z.string().describe("The output's last 2000 characters."),
});

export const diffStat = z.strictObject({ files: z.number(), added: z.number(), removed: z.number() });

export const attemptResult = z.strictObject({
  rank: z.number(),
  session_id: z.string(),
  branch: z.string(),
  worktree: z.string(),
  model: z.string().optional(),
  permission_mode: z.string().optional(),
  outcome: z.enum(["completed", "failed", "timed_out"]),
  reason: z.string().optional().describe("failed / timed_out: why."),
  checks_passed: z.number(),
  checks_total: z.number(),
  checks: z.array(checkResult),
  checks_log: z.string().optional().describe("The checks' whole output (bounded)."),
  diff: diffStat,
  cost_usd: z.number().nullable().optional(),
  duration_ms: z.number(),
  summary: z.string().describe("The answer's first 300 characters."),
});

export const fanOutOutput = z.strictObject({
  repo: z.string(),
  base_commit: z.string(),
  checks_source: z.enum(["config", "repo", "none"]),
  attempts: z.array(attemptResult).describe("Best first."),
  table: z.string().describe("The ranking as a text table."),
});

export const mergeInput = z
  .object({
    session_id: sessionId,
    target: z.string().min(1).max(255).optional().describe("Branch; default: the one it started from."),
    strategy: z.enum(["merge", "squash", "rebase"]).default("merge"),
    ...idempotencyField,
  })
  .strict();

export const mergeOutput = z.strictObject({
  session_id: z.string(),
  merged: z.boolean(),
  target: z.string(),
  strategy: z.enum(["merge", "squash", "rebase"]),
  target_before: z.string(),
  target_after: z.string(),
  committed: z.string().optional().describe("The commit of the session's uncommitted changes on its branch."),
  conflicts: z.array(z.string()).optional().describe("Files that conflict (nothing changed)."),
  checks: z.array(checkResult).optional(),
  reason: z.string().optional().describe("Why not merged."),
  queued_ms: z.number().describe("Time spent waiting for the merge queue."),
});

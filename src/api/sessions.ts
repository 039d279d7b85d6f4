/** Schemas of the tools that start, resume, end and list sessions. */
import { z } from "zod";
import { SessionRecordSchema } from "../store/schema.js";
import { backend, doppler, env, pendingPermission, sessionId, status } from "./common.js";
import { headlessOptionFields } from "./headless.js";

const permissionMode = z.enum(["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]);

export const startInput = z
  .object({
    cwd: z.string().min(1).max(4096).describe("Working directory of the session (must exist)."),
    prompt: z.string().optional().describe("A first prompt, delivered once the session is ready (the same rules as send_message's message)."),
    model: z.string().min(1).max(200).regex(/^[^\s\0]+$/).optional().describe("Model name or alias, e.g. sonnet or claude-opus-4-8."),
    permission_mode: permissionMode.optional().describe("Claude Code permission mode. bypassPermissions needs the server's CLAUDE_SESSIONS_ALLOW_BYPASS=1."),
    max_turns: z.number().int().min(1).max(100000).optional().describe("tmux/pty: the server refuses prompts after this many turns of the session (resume keeps the count). headless: the CLI's own limit of agentic turns per prompt (error_subtype error_max_turns)."),
    team_name: z.string().min(1).max(200).optional(),
    teammate_name: z.string().min(1).max(200).optional(),
    append_system_prompt: z.string().max(100000).optional(),
    add_dirs: z.array(z.string().min(1).max(4096)).max(64).optional().describe("More directories Claude may use (--add-dir)."),
    allowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
    disallowed_tools: z.array(z.string().min(1).max(500)).max(200).optional(),
    env: env.optional(),
    log_file: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("An absolute path for a new file that gets the raw terminal output (created by the server, mode 0600; it must not exist yet, and its directory must exist and be yours)."),
    backend: backend.optional(),
    doppler: doppler.optional(),
    trust_workspace: z.boolean().optional().describe("Accept Claude Code's 'trust this folder' screen if it appears."),
    ...headlessOptionFields,
  })
  .strict();

export const startOutput = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  status,
  backend,
  pid: z.number().optional(),
  tmux_target: z.string().optional(),
  attach_command: z.string().optional(),
  started_at: z.string().optional(),
});

export const resumeInput = z
  .object({
    session_id: sessionId.optional(),
    claude_session_id: z.string().max(64).optional().describe("Adopt a conversation this server never started (needs cwd)."),
    cwd: z.string().min(1).max(4096).optional().describe("Working directory (default: the session's own)."),
    message: z.string().optional().describe("A prompt to deliver once the session is ready."),
    fork: z.boolean().optional(),
    backend: backend.optional(),
    env: env.optional(),
    doppler: doppler.optional(),
    trust_workspace: z.boolean().optional(),
    ...headlessOptionFields,
  })
  .strict();

export const resumeOutput = startOutput.extend({
  resumed_at: z.string(),
  forked: z.boolean(),
  previous_state: z.strictObject({ created_at: z.string(), last_active: z.string().optional(), claude_session_id: z.string() }),
  already_running: z.boolean().optional().describe("Another call resumed it at the same moment: this is that call's session, not a second process."),
});

export const killInput = z
  .object({
    session_id: sessionId,
    force: z.boolean().default(false),
    save_state: z.boolean().default(true).describe("Keep the record so resume_session can bring the conversation back."),
  })
  .strict();

export const killOutput = z.strictObject({
  session_id: z.string(),
  status: z.enum(["killed", "not_found", "already_dead"]),
  exit_code: z.number().optional(),
  left_running: z.array(z.number()).optional().describe("Processes of the session (its tree, including ones that left its process group) still running after the kill."),
  state_saved: z.boolean(),
  killed_at: z.string(),
});

export const listInput = z
  .object({
    status_filter: z.enum(["all", "active", "inactive", "error"]).default("all"),
    team_filter: z.string().max(200).optional(),
    limit: z.number().int().min(0).max(100000).optional(),
    include_metadata: z.boolean().default(false).describe("Return the whole stored record of each session."),
  })
  .strict();

export const sessionSummary = z.strictObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  status,
  backend,
  survives_restart: z.boolean(),
  pid: z.number().optional(),
  cwd: z.string(),
  created_at: z.string(),
  last_active: z.string().optional(),
  team_name: z.string().optional(),
  teammate_name: z.string().optional(),
  model: z.string().optional(),
  turn_count: z.number(),
  pending_permission: pendingPermission.optional(),
  attach_command: z.string().optional(),
});

/** include_metadata: the stored record as it is, plus whether it outlives the server. */
export const sessionRecordView = SessionRecordSchema.extend({ survives_restart: z.boolean() });

export const listOutput = z.strictObject({
  sessions: z.array(z.union([sessionSummary, sessionRecordView])),
  total_count: z.number(),
  filtered_count: z.number(),
});

import { z } from "zod";
import { defineTool } from "../tool.js";
import { backend, doppler, env, status } from "./common.js";

const permissionMode = z.enum(["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]);

export const startInput = z
  .object({
    cwd: z.string().min(1).max(4096).describe("Working directory of the session (must exist)."),
    prompt: z.string().optional().describe("A first prompt, delivered once the session is ready."),
    model: z.string().min(1).max(200).regex(/^[^\s\0]+$/).optional().describe("Model name or alias, e.g. sonnet or claude-opus-4-8."),
    permission_mode: permissionMode.optional().describe("Claude Code permission mode. bypassPermissions needs the server's CLAUDE_SESSIONS_ALLOW_BYPASS=1."),
    max_turns: z.number().int().min(1).max(100000).optional().describe("The orchestrator refuses prompts after this many turns."),
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
  })
  .strict();

export const startOutput = z.looseObject({
  session_id: z.string(),
  claude_session_id: z.string(),
  status,
  backend: z.string(),
  pid: z.number().optional(),
  tmux_target: z.string().optional(),
  attach_command: z.string().optional(),
  started_at: z.string().optional(),
});

export const startSession = defineTool({
  name: "start_session",
  title: "Start a Claude Code session",
  description:
    "Starts an interactive Claude Code session in a tmux pane (or a PTY) and returns once it is ready (its SessionStart hook fired). " +
    "Fails with a clear reason, including the screen, when Claude Code shows a login, trust or API-key screen or exits.",
  input: startInput,
  output: startOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (orch, args, ctx) => orch.start(args, ctx) as Promise<z.infer<typeof startOutput>>,
});

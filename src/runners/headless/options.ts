/**
 * Pure mapping from a headless session's options to the Agent SDK's Options (tests assert it). The
 * callbacks that need a live session (canUseTool, the spawn hook) are added by HeadlessSession.
 */
import { randomUUID } from "node:crypto";
import type { Options } from "@anthropic-ai/claude-agent-sdk";
import { childEnv } from "../../claude/launch.js";
import type { HeadlessOptions } from "./types.js";

export interface LaunchPlan {
  options: Options;
  /** The Claude session id the process will report (new, resumed, or the fork's new one). */
  claudeSessionId: string;
}

/** Variables the SDK would otherwise read from the server's own environment. */
const SDK_OWN = new Set(["DEBUG_CLAUDE_AGENT_SDK", "CLAUDE_AGENT_SDK_CLIENT_APP"]);

export function headlessEnv(o: Pick<HeadlessOptions, "base_env" | "env">): Record<string, string> {
  const env = childEnv(o.base_env ?? process.env, o.env ?? {});
  // No terminal: a TERM from the server's environment would only mislead the CLI.
  if (!(o.env && "TERM" in o.env)) delete env.TERM;
  for (const k of SDK_OWN) if (!(o.env && k in o.env)) delete env[k];
  return env;
}

export function buildSdkOptions(o: Omit<HeadlessOptions, "live">): LaunchPlan {
  const claudeSessionId = o.resume && !o.fork_session ? o.resume : (o.claude_session_id ?? randomUUID());
  const options: Options = {
    cwd: o.cwd,
    env: headlessEnv(o),
    pathToClaudeCodeExecutable: o.claude_path,
    settings: o.settings_path,
  };
  if (o.resume) {
    options.resume = o.resume;
    if (o.fork_session) {
      options.forkSession = true;
      options.sessionId = claudeSessionId;
    }
    if (o.resume_at) options.resumeSessionAt = o.resume_at;
  } else {
    options.sessionId = claudeSessionId;
  }
  if (o.model) options.model = o.model;
  if (o.permission_mode) {
    options.permissionMode = o.permission_mode;
    if (o.permission_mode === "bypassPermissions") options.allowDangerouslySkipPermissions = true;
  }
  if (o.system_prompt !== undefined) options.systemPrompt = o.system_prompt;
  else if (o.append_system_prompt)
    options.systemPrompt = { type: "preset", preset: "claude_code", append: o.append_system_prompt };
  if (o.max_turns !== undefined) options.maxTurns = o.max_turns;
  if (o.max_budget_usd !== undefined) options.maxBudgetUsd = o.max_budget_usd;
  if (o.fallback_model) options.fallbackModel = o.fallback_model;
  if (o.mcp_servers) {
    options.mcpServers = o.mcp_servers;
    // Over stdin, not `--mcp-config` on argv: a server's env and headers may hold secrets.
    options.mcpServersDelivery = "initialize";
  }
  if (o.strict_mcp_config) options.strictMcpConfig = true;
  // The member server's file (sessions/teams/members.ts): its path on argv, the secret it names in the environment.
  if (o.member_mcp_config) options.extraArgs = { ...options.extraArgs, "mcp-config": o.member_mcp_config };
  if (o.setting_sources) options.settingSources = o.setting_sources;
  if (o.output_schema) options.outputFormat = { type: "json_schema", schema: o.output_schema };
  if (o.allowed_tools?.length) options.allowedTools = o.allowed_tools;
  if (o.disallowed_tools?.length) options.disallowedTools = o.disallowed_tools;
  if (o.add_dirs?.length) options.additionalDirectories = o.add_dirs;
  if (o.effort) options.effort = o.effort;
  if (o.agents) {
    options.agents = Object.fromEntries(
      Object.entries(o.agents).map(([name, a]) => [
        name,
        {
          description: a.description,
          prompt: a.prompt,
          ...(a.tools ? { tools: a.tools } : {}),
          ...(a.disallowed_tools ? { disallowedTools: a.disallowed_tools } : {}),
          ...(a.model ? { model: a.model } : {}),
        },
      ]),
    );
  }
  if (o.agent) options.agent = o.agent;
  if (o.tools) options.tools = o.tools;
  if (o.betas?.length) options.betas = o.betas;
  if (o.debug_file) options.debugFile = o.debug_file;
  return { options, claudeSessionId };
}

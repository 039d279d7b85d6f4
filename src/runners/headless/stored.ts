/**
 * A headless session's launch options (the record's typed options, plus the MCP servers that are passed along but
 * never stored) as the engine's HeadlessOptions.
 */
import type { LaunchOptions } from "../host.js";
import type { HeadlessOptions } from "./types.js";

type Launch = Omit<HeadlessOptions, "cwd" | "claude_path" | "events_path" | "settings_path" | "live">;

export function headlessOptionsOf(o: LaunchOptions): Launch {
  const out: Launch = {};
  if (o.model) out.model = o.model;
  if (o.permission_mode) out.permission_mode = o.permission_mode;
  if (o.append_system_prompt) out.append_system_prompt = o.append_system_prompt;
  if (o.system_prompt !== undefined) out.system_prompt = o.system_prompt;
  if (o.max_turns !== undefined) out.max_turns = o.max_turns;
  if (o.max_budget_usd !== undefined) out.max_budget_usd = o.max_budget_usd;
  if (o.fallback_model) out.fallback_model = o.fallback_model;
  if (o.mcp_servers) out.mcp_servers = o.mcp_servers;
  if (o.strict_mcp_config === true) out.strict_mcp_config = true;
  if (o.setting_sources) out.setting_sources = [...o.setting_sources];
  if (o.output_schema) out.output_schema = o.output_schema;
  if (o.allowed_tools?.length) out.allowed_tools = [...o.allowed_tools];
  if (o.disallowed_tools?.length) out.disallowed_tools = [...o.disallowed_tools];
  if (o.add_dirs?.length) out.add_dirs = [...o.add_dirs];
  if (o.effort) out.effort = o.effort;
  if (o.agents) out.agents = o.agents;
  if (o.agent) out.agent = o.agent;
  if (o.tools) out.tools = [...o.tools];
  if (o.betas?.length) out.betas = [...o.betas];
  return out;
}

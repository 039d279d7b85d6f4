/**
 * A headless session's launch options as the session layer keeps them (the record's untyped `options`, plus
 * the MCP servers that are passed along but never stored), read back into the engine's HeadlessOptions.
 */
import type { McpServerConfig, SettingSource } from "@anthropic-ai/claude-agent-sdk";
import type { HeadlessOptions, PermissionMode } from "./types.js";

type Launch = Omit<HeadlessOptions, "cwd" | "claude_path" | "events_path" | "settings_path" | "hook_script" | "live">;

const MODES = new Set<string>(["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]);
const SOURCES = new Set<string>(["user", "project", "local"]);

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const strs = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === "string") && v.length ? v.map(String) : undefined);
const isMode = (v: unknown): v is PermissionMode => typeof v === "string" && MODES.has(v);
const isSource = (v: unknown): v is SettingSource => typeof v === "string" && SOURCES.has(v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** Checked by the tool's schema before it got here (api/headless.ts). */
const isServers = (v: unknown): v is Record<string, McpServerConfig> => isObject(v) && Object.values(v).every(isObject);

export function headlessOptionsOf(o: Record<string, unknown>): Launch {
  const out: Launch = {};
  const set = <K extends keyof Launch>(k: K, v: Launch[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("model", str(o.model));
  if (isMode(o.permission_mode)) out.permission_mode = o.permission_mode;
  set("append_system_prompt", str(o.append_system_prompt));
  if (typeof o.system_prompt === "string") out.system_prompt = o.system_prompt;
  set("max_turns", num(o.max_turns));
  set("max_budget_usd", num(o.max_budget_usd));
  set("fallback_model", str(o.fallback_model));
  if (isServers(o.mcp_servers)) out.mcp_servers = o.mcp_servers;
  if (o.strict_mcp_config === true) out.strict_mcp_config = true;
  if (Array.isArray(o.setting_sources) && o.setting_sources.every(isSource)) out.setting_sources = [...o.setting_sources];
  if (isObject(o.output_schema)) out.output_schema = o.output_schema;
  set("allowed_tools", strs(o.allowed_tools));
  set("disallowed_tools", strs(o.disallowed_tools));
  set("add_dirs", strs(o.add_dirs));
  return out;
}

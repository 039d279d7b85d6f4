/**
 * Pure builder of a terminal session's argv for Claude's options beyond ClaudeOptions (launch.ts): each one the
 * CLI's own flag, in `--flag=value` form. Values that are JSON or long go through files in the session's own
 * directory (the session layer writes them 0600 before the spawn); MCP servers' env and header values go through the
 * child's environment, the file naming only the variables (Claude Code expands `${VAR}` in an MCP configuration).
 */
import { join } from "node:path";
import type { StoredOptions } from "../../store/options.js";

type McpServer = {
  type?: "stdio" | "sse" | "http";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
};

export type TerminalOptions = Pick<
  StoredOptions,
  "system_prompt" | "fallback_model" | "strict_mcp_config" | "setting_sources" | "effort" | "agents" | "agent" | "tools" | "debug"
> & {
  mcp_servers?: Record<string, McpServer> | undefined;
};

/** Files of a session's directory that carry its options. */
export const OPTION_FILES = { systemPrompt: "system-prompt.txt", mcp: "mcp-servers.json", debug: "claude-debug.log" } as const;

/** The prefix of the variables that carry MCP servers' env and header values. */
export const MCP_VALUE_ENV = "CLAUDE_SESSIONS_MCP_VALUE_";

export interface OptionArgs {
  args: string[];
  /** Written (0600) before the spawn. */
  files: Array<{ path: string; text: string }>;
  /** Added to the child's environment (never argv, never a file). */
  env: Record<string, string>;
}

/** The agents as the CLI's `--agents` JSON (its field names). */
export function agentsJson(agents: NonNullable<StoredOptions["agents"]>): string {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, a] of Object.entries(agents)) {
    out[name] = {
      description: a.description,
      prompt: a.prompt,
      ...(a.tools ? { tools: a.tools } : {}),
      ...(a.disallowed_tools ? { disallowedTools: a.disallowed_tools } : {}),
      ...(a.model ? { model: a.model } : {}),
    };
  }
  return JSON.stringify(out);
}

/** The MCP configuration file's text with every env and header value replaced by a variable, and those variables. */
export function mcpConfig(servers: Record<string, McpServer>): { text: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  let n = 0;
  const hide = (m: Record<string, string> | undefined) => {
    if (!m) return undefined;
    const o: Record<string, string> = {};
    for (const [k, v] of Object.entries(m)) {
      const name = `${MCP_VALUE_ENV}${n++}`;
      env[name] = v;
      o[k] = `\${${name}}`;
    }
    return o;
  };
  const mcpServers: Record<string, McpServer> = {};
  for (const [name, s] of Object.entries(servers)) {
    const { env: e, headers: h, ...rest } = s;
    mcpServers[name] = { ...rest, ...(e ? { env: hide(e)! } : {}), ...(h ? { headers: hide(h)! } : {}) };
  }
  return { text: JSON.stringify({ mcpServers }, null, 2) + "\n", env };
}

export function terminalOptionArgs(dir: string, o: TerminalOptions): OptionArgs {
  const out: OptionArgs = { args: [], files: [], env: {} };
  if (o.system_prompt !== undefined) {
    const path = join(dir, OPTION_FILES.systemPrompt);
    out.files.push({ path, text: o.system_prompt });
    out.args.push(`--system-prompt-file=${path}`);
  }
  if (o.fallback_model) out.args.push(`--fallback-model=${o.fallback_model}`);
  if (o.setting_sources) out.args.push(`--setting-sources=${o.setting_sources.join(",")}`);
  if (o.mcp_servers && Object.keys(o.mcp_servers).length) {
    const path = join(dir, OPTION_FILES.mcp);
    const c = mcpConfig(o.mcp_servers);
    out.files.push({ path, text: c.text });
    Object.assign(out.env, c.env);
    out.args.push(`--mcp-config=${path}`);
  }
  if (o.strict_mcp_config) out.args.push("--strict-mcp-config");
  if (o.effort) out.args.push(`--effort=${o.effort}`);
  if (o.agents && Object.keys(o.agents).length) out.args.push(`--agents=${agentsJson(o.agents)}`);
  if (o.agent) out.args.push(`--agent=${o.agent}`);
  if (o.tools) out.args.push(`--tools=${o.tools.join(",")}`);
  if (o.debug) out.args.push(`--debug-file=${join(dir, OPTION_FILES.debug)}`);
  return out;
}

/**
 * A team member's own MCP server, started the way the session's Claude Code starts it: the command and `${VAR}`
 * environment of `<state>/<id>/member-mcp.json`, expanded from the session process's real environment (read from
 * /proc), and driven by the MCP SDK's Client.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** The environment of the session's Claude process (the one tagged with its id that holds a member secret). */
export function sessionProcessEnv(id: string): Record<string, string> {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let raw: string;
    try {
      raw = readFileSync(`/proc/${pid}/environ`, "utf8");
    } catch {
      continue;
    }
    const env = Object.fromEntries(
      raw
        .split("\0")
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    );
    if (env.CLAUDE_SESSIONS_ID === id && env.CLAUDE_SESSIONS_MEMBER_SECRET) return env;
  }
  throw new Error(`no process of session ${id} with a member secret`);
}

export interface MemberConfig {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export function memberConfig(stateDir: string, id: string): MemberConfig {
  const c = JSON.parse(readFileSync(join(stateDir, id, "member-mcp.json"), "utf8")) as {
    mcpServers: Record<string, MemberConfig>;
  };
  return c.mcpServers["claude-sessions-team"]!;
}

export interface MemberResult {
  ok: boolean;
  data: Record<string, any>;
  error?: { code: string; message: string; suggestion: string };
}

export interface Member {
  client: Client;
  tools(): Promise<string[]>;
  call(name: string, args?: Record<string, unknown>, timeout?: number): Promise<MemberResult>;
  close(): Promise<void>;
}

/**
 * Starts session `id`'s member server. `change` edits the environment after expansion (a forged or missing secret,
 * a lead flag the session does not have).
 */
export async function connectMember(
  stateDir: string,
  id: string,
  change: (env: Record<string, string>) => void = () => {},
): Promise<Member> {
  const cfg = memberConfig(stateDir, id);
  const session = sessionProcessEnv(id);
  const expanded = Object.fromEntries(
    Object.entries(cfg.env).map(([k, v]) => [
      k,
      v.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, n: string) => session[n] ?? ""),
    ]),
  );
  const env = { ...session, ...expanded };
  change(env);
  const transport = new StdioClientTransport({ command: cfg.command, args: cfg.args, env, stderr: "pipe" });
  const client = new Client({ name: "member-test", version: "1" });
  await client.connect(transport);
  return {
    client,
    async tools() {
      return (await client.listTools()).tools.map((t) => t.name).sort();
    },
    async call(name, args = {}, timeout = 60_000) {
      const res = await client.callTool({ name, arguments: args }, undefined, { timeout });
      const text = (res.content as Array<{ text?: string }>)[0]?.text ?? "";
      if (res.isError) return { ok: false, data: {}, error: (JSON.parse(text) as { error: MemberResult["error"] }).error! };
      return { ok: true, data: res.structuredContent as Record<string, any> };
    },
    close: () => client.close(),
  };
}

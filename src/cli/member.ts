/**
 * `claude-sessions member`: a team session's own MCP server on stdio (issue 25), started by its Claude Code from
 * the configuration the launch wrote (sessions/teams/members.ts). Its tools (api/members.ts) act only inside the team;
 * each call is one JSON line to a server of the state directory over its Unix socket — the one that launched the
 * session first, then any other that answers — with the session's id and secret (from the environment, never argv).
 * stdout is the protocol; nothing else is printed there. Loaded by bin.ts without the rest of the server.
 */
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { socketCandidates } from "../sandbox/member-relay.js";
import { BoundedStdioServerTransport } from "../server/mcp/stdio.js";
import {
  LEAD_TOOLS,
  MEMBER_ENV,
  MEMBER_SERVER_NAME,
  MEMBER_TOOL_DEFS,
  MEMBER_TOOLS,
  type MemberResponse,
  type MemberToolName,
} from "../api/members.js";

/** The sockets to try (re-exported: tests and the launcher's relay share the rule). */
export { socketCandidates };

/** `tcp:PORT`: a sandboxed session's relay on its own loopback (sandbox/member-relay.ts), the only way out it has. */
function tcpPort(target: string): number | undefined {
  const m = /^tcp:(\d{1,5})$/.exec(target);
  return m ? Number(m[1]) : undefined;
}

const unreachable = (why: string): MemberResponse => ({
  ok: false,
  error: {
    code: "NODE_UNREACHABLE",
    message: `no claude-sessions server of this state directory answered (${why}).`,
    retryable: true,
    suggestion: "Try again once a claude-sessions server runs (the client that started your team).",
  },
});

/** One call over one connection: the request line out, the answer line back. */
function callOn(path: string, line: string, signal: AbortSignal | undefined): Promise<MemberResponse | "refused"> {
  return new Promise((resolve) => {
    const port = tcpPort(path);
    const sock = port === undefined ? connect(path) : connect({ host: "127.0.0.1", port });
    let buf = "";
    let connected = false;
    const done = (r: MemberResponse | "refused") => {
      signal?.removeEventListener("abort", abort);
      sock.destroy();
      resolve(r);
    };
    const abort = () =>
      done({
        ok: false,
        error: {
          code: "CANCELLED",
          message: "the call was cancelled.",
          retryable: false,
          suggestion: "The request was cancelled by the client.",
        },
      });
    signal?.addEventListener("abort", abort, { once: true });
    sock.setEncoding("utf8");
    sock.on("connect", () => {
      connected = true;
      sock.write(line);
    });
    sock.on("data", (c: string) => {
      buf += c;
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      try {
        done(JSON.parse(buf.slice(0, nl)) as MemberResponse);
      } catch {
        done(unreachable("an unreadable answer"));
      }
    });
    sock.on("error", () => done(connected ? unreachable("the connection broke") : "refused"));
    sock.on("close", () => done(connected ? unreachable("the server closed the connection") : "refused"));
  });
}

export async function memberCall(
  env: NodeJS.ProcessEnv,
  tool: MemberToolName,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<MemberResponse> {
  // A missing secret is sent as a wrong one: the server refuses it and its audit log has the attempt.
  const line =
    JSON.stringify({ session_id: env[MEMBER_ENV.session] ?? "-", secret: env[MEMBER_ENV.secret] || "-", tool, arguments: args }) +
    "\n";
  const target = env[MEMBER_ENV.socket];
  if (target && tcpPort(target) !== undefined) {
    // The relay starts with the sandbox, before Claude Code: a refusal is a relay not yet listening, tried again briefly.
    for (let i = 0; i < 20; i++) {
      const r = await callOn(target, line, signal);
      if (r !== "refused") return r;
      await sleep(100);
    }
    return unreachable("the sandbox's member relay refused the connection");
  }
  for (const path of socketCandidates(target)) {
    const r = await callOn(path, line, signal);
    if (r !== "refused") return r;
  }
  return unreachable("no socket in the state directory accepted a connection");
}

/** The member server: the team tools, and the lead's when this session is its team's lead. */
export function memberServer(env: NodeJS.ProcessEnv = process.env): McpServer {
  const server = new McpServer(
    { name: MEMBER_SERVER_NAME, version: "1" },
    {
      instructions:
        "Tools to work with your team: the other Claude Code sessions started with your team_name. Messages you get that " +
        'start with "From <name>:" come from teammates.',
    },
  );
  const tools: MemberToolName[] = [...MEMBER_TOOLS, ...(env[MEMBER_ENV.lead] === "1" ? LEAD_TOOLS : [])];
  for (const name of tools) {
    const def = MEMBER_TOOL_DEFS[name];
    server.registerTool(
      name,
      {
        title: def.title,
        description: def.description,
        inputSchema: def.input,
        outputSchema: def.output,
        annotations: { title: def.title, ...def.annotations },
      },
      async (args: Record<string, unknown>, extra: { signal: AbortSignal }) => {
        const res = await memberCall(env, name, args, extra.signal);
        if (!res.ok) return { isError: true, content: [{ type: "text" as const, text: JSON.stringify({ error: res.error }) }] };
        return { content: [{ type: "text" as const, text: JSON.stringify(res.result) }], structuredContent: res.result };
      },
    );
  }
  return server;
}

export async function runMember(): Promise<void> {
  const server = memberServer();
  const transport = new BoundedStdioServerTransport();
  const end = () => void server.close().finally(() => process.exit(0));
  process.stdin.on("end", end);
  process.on("SIGTERM", end);
  await server.connect(transport);
}

/**
 * The built server as `serve --http 127.0.0.1:0` in a test's private world, and MCP clients over the SDK's
 * StreamableHTTPClientTransport (the same call helpers as the stdio harness).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI, until, type ToolResult, type World } from "./harness.js";
import type { ToolArgs, ToolData, ToolName } from "./tools.js";

export interface HttpServerProc {
  url: string;
  token: string;
  proc: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

export async function startHttpServer(
  world: World,
  extraEnv: Record<string, string> = {},
  listen = "127.0.0.1:0",
): Promise<HttpServerProc> {
  const proc = spawn(process.execPath, [CLI, "serve", "--http", listen], {
    env: { ...world.env, ...extraEnv },
    cwd: world.root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  proc.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const url = await until(
    () =>
      /serving MCP at (http:\/\/\S+)\/mcp/.exec(err)?.[1] ??
      (proc.exitCode !== null ? Promise.reject(new Error(`the server exited: ${err}`)) : undefined),
    20_000,
  );
  const token = extraEnv.CLAUDE_SESSIONS_TOKEN ?? readFileSync(join(world.stateDir, "token"), "utf8").trim();
  return {
    url,
    token,
    proc,
    stderr: () => err,
    async stop() {
      if (proc.exitCode !== null) return;
      const done = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await done;
    },
  };
}

type CallOpts = { timeout?: number; onprogress?: (p: unknown) => void; signal?: AbortSignal };

export interface HttpMcp {
  client: Client;
  /** Typed per tool like the stdio client (tests/helpers/tools.ts). */
  callOk<N extends ToolName>(name: N, args?: ToolArgs<N>, opts?: CallOpts): Promise<ToolData<N>>;
  call<N extends ToolName>(name: N, args?: ToolArgs<N>, opts?: CallOpts): Promise<ToolResult<ToolData<N>>>;
  close(): Promise<void>;
}

export async function connectHttp(url: string, token: string, name = "cs-http-test"): Promise<HttpMcp> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  const call = async <T>(name: string, args: Record<string, unknown> = {}, opts: CallOpts = {}): Promise<ToolResult<T>> => {
    const res = await client.callTool({ name, arguments: args }, undefined, {
      timeout: opts.timeout ?? 60_000,
      ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
    if (res.isError)
      return { ok: false, error: (JSON.parse(text) as { error: ToolResult["error"] }).error!, text, data: {} as T };
    return { ok: true, data: res.structuredContent as T, text };
  };
  return {
    client,
    call: (name, args, opts) => call(name, args as Record<string, unknown> | undefined, opts),
    async callOk(name, args, opts) {
      const r = await call<ToolData<typeof name>>(name, args as Record<string, unknown> | undefined, opts);
      if (!r.ok) throw new Error(`${name} failed: ${r.text}`);
      return r.data;
    },
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

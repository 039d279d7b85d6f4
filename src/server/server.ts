/**
 * The MCP server: lists the tools with their JSON schemas, validates every call with zod, runs it,
 * and maps every failure to an `isError` result carrying {error: {code, message, retryable, suggestion}}.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CallContext } from "../core/context.js";
import { SessionError, toSessionError } from "../core/errors.js";
import type { SessionService } from "../sessions/service.js";
import type { Logger } from "../util/log.js";
import { actorPart, callTool } from "./call.js";
import { serverInfo } from "./info.js";
import { NOTIFY_LOGGER, startNotifications } from "./notify.js";
import { installPrompts } from "./prompts.js";
import { installResources } from "./resources.js";
import type { CallRouter, Tool } from "./tool.js";
import { TOOLS } from "./tools/index.js";

export const SERVER_NAME = "claude-sessions";

export function errorResult(err: unknown): CallToolResult {
  const e = toSessionError(err);
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: e.toBody() }, null, 2) }] };
}

export interface ServerOptions {
  /** The transport this server speaks over, for the audit log's actor (`mcp:<transport>:<client name>`). */
  transport?: "stdio" | "http";
  /** With nodes configured (src/nodes): routes every call to the machine that runs its session. */
  router?: CallRouter;
}

/** The tools as tools/list shows them: names, JSON Schemas of input and output, annotations. */
export function listTools() {
  return TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: "input" }) as { type: "object" },
    outputSchema: z.toJSONSchema(t.output, { io: "output" }) as { type: "object" },
    annotations: { title: t.title, ...t.annotations },
  }));
}

/**
 * What every `Server` of this process shares (one per HTTP client): the tools list (about 100 KiB of JSON Schema)
 * and the SDK's JSON Schema validator (an Ajv instance each otherwise).
 */
let shared: { tools: ReturnType<typeof listTools>; validator: AjvJsonSchemaValidator } | undefined;

export function createServer(svc: SessionService, log: Logger, version: string, opts: ServerOptions = {}): Server {
  const capabilities = { tools: {}, resources: { subscribe: true, listChanged: true }, prompts: {}, logging: {}, completions: {} };
  shared ??= { tools: listTools(), validator: new AjvJsonSchemaValidator() };
  const server = new Server({ name: SERVER_NAME, version }, { capabilities, instructions: INSTRUCTIONS, jsonSchemaValidator: shared.validator });
  serverInfo.version = version;
  const resources = installResources(server, svc, log, opts.router);
  const stops = [resources.stop, startNotifications(server, svc, log)];
  // Session notices of the nodes reach this server's clients as if their sessions were local (with `node`).
  if (opts.router) stops.push(opts.router.onNotice((level, data) => void server.sendLoggingMessage({ level, logger: NOTIFY_LOGGER, data }).catch(() => {})));
  installPrompts(server, svc);
  server.onclose = () => stops.forEach((stop) => stop());
  const byName = new Map<string, Tool>(TOOLS.map((t) => [t.name, t]));
  const tools = shared.tools;

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = byName.get(req.params.name);
    if (!tool) {
      return errorResult(new SessionError("INVALID_ARGUMENT", `there is no tool named ${JSON.stringify(req.params.name)}.`, { suggestion: `The tools are: ${[...byName.keys()].join(", ")}.` }));
    }
    const token = req.params._meta?.progressToken;
    const ctx: CallContext = { signal: extra.signal };
    if (token !== undefined) {
      ctx.progress = (p) => {
        void extra
          .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) } })
          .catch(() => {});
      };
    }
    const t0 = Date.now();
    // Validation, the result check and the audit line: call.ts, as for every transport.
    const info = server.getClientVersion();
    const client = info ? actorPart(info.name) : undefined;
    ctx.actor = `mcp:${opts.transport ?? "stdio"}:${info ? actorPart(`${info.name}/${info.version}`) : "unknown"}`;
    try {
      const value = await callTool(svc, tool, req.params.arguments ?? {}, ctx, { ...(client ? { client } : {}), ...(opts.router ? { router: opts.router } : {}) });
      const out = structured(value);
      // start_session {stream_output}: this client follows the session's transcript (the design's "stream output").
      if (typeof out.output_resource === "string") await resources.subscribe(out.output_resource).catch((e: unknown) => log.warn(`stream_output: ${String(e)}`));
      log.debug(`${tool.name} ok in ${Date.now() - t0} ms`);
      return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
    } catch (err) {
      const e = toSessionError(err);
      if (e.code === "INTERNAL") log.error(`${tool.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      else log.info(`${tool.name}: ${e.code} ${e.message.split("\n")[0]}`);
      return errorResult(e);
    }
  });
  return server;
}

function structured(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? { ...v } : { value: v };
}

const INSTRUCTIONS = `claude-sessions runs interactive Claude Code sessions in tmux panes (or PTYs).
Typical flow: start_session {cwd} → send_message {session_id, message} (waits for the reply by default) →
wait_for_completion for long turns → respond_permission when a turn waits for a permission answer →
kill_session when done; resume_session brings an ended session back with its conversation.
A person can watch a tmux session with the attach_command that start_session returns.`;

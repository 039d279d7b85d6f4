/**
 * The MCP server: lists the tools with their JSON schemas, validates every call with zod, runs it,
 * and maps every failure to an `isError` result carrying {error: {code, message, retryable, suggestion}}.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolsetName } from "../config.js";
import type { CallContext } from "../core/context.js";
import { SessionError, toSessionError } from "../core/errors.js";
import type { SessionService } from "../sessions/service.js";
import type { Logger } from "../util/log.js";
import { actorPart, callTool } from "./call.js";
import { instructionsFor } from "./instructions.js";
import { NOTIFY_LOGGER, startNotifications } from "./mcp/notify.js";
import { installPrompts } from "./mcp/prompts.js";
import { installResources } from "./mcp/resources.js";
import { startSessionsChanged } from "./mcp/sessions-changed.js";
import { listingOf } from "./listing/listing.js";
import { builtListing } from "./listing/cache.js";
import { clientRootsOf } from "./mcp/client-roots.js";
import { serverShell } from "./mcp/shell.js";
import type { CallRouter, Tool } from "./tool.js";
import { TOOLS } from "./tools/index.js";
import { offersCore, toolsOf } from "./toolsets.js";

export { SERVER_NAME } from "./mcp/shell.js";

export function errorResult(err: unknown): CallToolResult {
  const e = toSessionError(err);
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: e.toBody() }, null, 2) }] };
}

export interface ServerOptions {
  /** The transport this server speaks over, for the audit log's actor (`mcp:<transport>:<client name>`). */
  transport?: "stdio" | "http";
  /** With nodes configured (src/nodes): routes every call to the machine that runs its session. */
  router?: CallRouter;
  /**
   * The server already made and connected with the default toolsets' name, capabilities, instructions and
   * tools/list (cli/serve-early.ts): the rest is added to it.
   */
  shell?: Server;
}

/** The tools as tools/list shows them: names, compact JSON Schemas of input and output, annotations (listing.ts). */
export function listTools(tools: readonly Tool[] = TOOLS) {
  return listingOf(tools);
}

/** What every `Server` of this process shares (one per HTTP client): the tools list of each toolset choice. */
const listings = new Map<string, ReturnType<typeof listTools>>();

/** tools/list of these toolsets: the one made at build time while it matches the modules (listing/cache.ts), else live. */
function listingFor(sets: readonly ToolsetName[]): ReturnType<typeof listTools> {
  const key = sets.join(",");
  let l = listings.get(key);
  if (!l) listings.set(key, (l = builtListing<ReturnType<typeof listTools>[number]>(key) ?? listTools(toolsOf(sets))));
  return l;
}

export function createServer(svc: SessionService, log: Logger, version: string, opts: ServerOptions = {}): Server {
  // CLAUDE_SESSIONS_TOOLSETS: the tools offered; resources and prompts come with the core tools.
  const sets = svc.deps.cfg.toolsets ?? ["all"];
  const offered = toolsOf(sets);
  const core = offersCore(sets);
  const names = new Set(offered.map((t) => t.name));
  const server =
    opts.shell ??
    serverShell(version, {
      core,
      instructions: instructionsFor(
        names,
        TOOLS.map((t) => t.name),
      ),
      tools: listingFor(sets),
      rowsPush: names.has("list_sessions"),
    });
  const changes = startSessionsChanged(server, svc, log, opts.router?.onRowsChanged?.bind(opts.router));
  const stops = [changes.stop, startNotifications(server, svc, log)];
  const resources = core ? installResources(server, svc, log, opts.router) : undefined;
  if (resources) stops.push(resources.stop);
  // Session notices of the nodes reach this server's clients as if their sessions were local (with `node`).
  if (opts.router)
    stops.push(
      opts.router.onNotice(
        (level, data) => void server.sendLoggingMessage({ level, logger: NOTIFY_LOGGER, data }).catch(() => {}),
      ),
    );
  if (core) installPrompts(server, svc, names);
  server.onclose = () => stops.forEach((stop) => stop());
  const byName = new Map<string, Tool>(offered.map((t) => [t.name, t]));
  const roots = clientRootsOf(server);

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = byName.get(req.params.name);
    if (!tool) {
      const other = TOOLS.some((t) => t.name === req.params.name)
        ? ` (not in this server's toolsets: ${sets.join(",")}; CLAUDE_SESSIONS_TOOLSETS)`
        : "";
      return errorResult(
        new SessionError("INVALID_ARGUMENT", `there is no tool named ${JSON.stringify(req.params.name)}${other}.`, {
          suggestion: `The tools are: ${[...byName.keys()].join(", ")}.`,
        }),
      );
    }
    const token = req.params._meta?.progressToken;
    const ctx: CallContext = { signal: extra.signal, roots };
    if (token !== undefined) {
      ctx.progress = (p) => {
        void extra
          .sendNotification({
            method: "notifications/progress",
            params: {
              progressToken: token,
              progress: p.progress,
              ...(p.total !== undefined ? { total: p.total } : {}),
              ...(p.message ? { message: p.message } : {}),
            },
          })
          .catch(() => {});
      };
    }
    const t0 = Date.now();
    if (tool.name === "list_sessions") changes.listed();
    // Validation, the result check and the audit line: call.ts, as for every transport.
    const info = server.getClientVersion();
    const client = info ? actorPart(info.name) : undefined;
    ctx.actor = `mcp:${opts.transport ?? "stdio"}:${info ? actorPart(`${info.name}/${info.version}`) : "unknown"}`;
    try {
      const value = await callTool(svc, tool, req.params.arguments ?? {}, ctx, {
        ...(client ? { client } : {}),
        ...(opts.router ? { router: opts.router } : {}),
      });
      const out = structured(value);
      // start_session {stream_output}: this client follows the session's transcript (the design's "stream output").
      if (typeof out.output_resource === "string" && resources)
        await resources.subscribe(out.output_resource).catch((e: unknown) => log.warn(`stream_output: ${String(e)}`));
      log.debug(`${tool.name} ok in ${Date.now() - t0} ms`);
      return { content: [{ type: "text", text: JSON.stringify(out) }], structuredContent: out };
    } catch (err) {
      const e = toSessionError(err);
      if (e.code === "INTERNAL")
        log.error(`${tool.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      else log.info(`${tool.name}: ${e.code} ${e.message.split("\n")[0]}`);
      return errorResult(e);
    }
  });
  return server;
}

function structured(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? { ...v } : { value: v };
}

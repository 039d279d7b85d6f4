/**
 * The MCP server before its sessions exist: name, version, capabilities, instructions and tools/list. createServer
 * (server.ts) adds everything that needs the sessions to it; a stdio start (cli/serve-early.ts) connects it first,
 * so a client's initialize and tools/list are answered while the rest of the server loads (issue 38 item 3).
 * Imports only what those two answers need.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { ListToolsRequestSchema, type ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { serverInfo } from "../info.js";
import { SESSIONS_CHANGED_CAP } from "./sessions-changed.js";

export const SERVER_NAME = "claude-sessions";

/**
 * The SDK's JSON Schema validator, shared by every `Server` of this process (one per HTTP client; an Ajv instance
 * each otherwise). Only a client's elicitation answers use it, which this server never asks for: its Ajv is made on
 * first use, not at start (~20 ms).
 */
let ajv: AjvJsonSchemaValidator | undefined;
const validator: jsonSchemaValidator = { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) };

export interface ShellOptions {
  /** The core tools are offered: resources and prompts come with them. */
  core: boolean;
  instructions: string;
  tools: ListToolsResult["tools"];
  /** list_sessions is offered: a coordinator may ask to be told when the rows change (sessions-changed.ts). */
  rowsPush?: boolean;
}

export function serverShell(version: string, o: ShellOptions): Server {
  const capabilities = {
    tools: {},
    ...(o.core ? { resources: { subscribe: true, listChanged: true }, prompts: {}, completions: {} } : {}),
    logging: {},
    ...(o.rowsPush ? { experimental: { [SESSIONS_CHANGED_CAP]: {} } } : {}),
  };
  const server = new Server(
    { name: SERVER_NAME, version },
    { capabilities, instructions: o.instructions, jsonSchemaValidator: validator },
  );
  serverInfo.version = version;
  const { tools } = o;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  return server;
}

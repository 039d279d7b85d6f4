#!/usr/bin/env node
// The yardstick of a server's start (bench: server spawn → tools/list): the smallest MCP server the SDK makes, one
// tool, on stdio. What any server written with the SDK pays to spawn, initialize and list.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const s = new McpServer({ name: "peer", version: "1.0.0" });
s.registerTool("echo", { description: "Returns its text.", inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: "text", text }],
}));
await s.connect(new StdioServerTransport());

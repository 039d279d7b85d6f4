/**
 * How the coordinator reaches a node's MCP server: the seam a second transport plugs into. Today one case, stdio:
 * the operator's exec command (ssh, kubectl exec, …) spawned with MCP on its stdio, given what it needs of the
 * environment (SSH_AUTH_SOCK, KUBECONFIG, …) and no secrets. The link (link.ts) owns the rest: the client, the
 * heartbeat, reconnection; it reads a process id and stderr where the transport has them.
 */
import type { Stream } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { NodeConfig } from "./config.js";
import { nodeExecEnv } from "./exec-env.js";

/** An SDK transport to one node, with the exec command's process id and stderr when it has a process. */
export type NodeTransport = Transport & { readonly pid?: number | null; readonly stderr?: Stream | null };

/** A new transport to the node `cfg` names (not yet started: the SDK client's connect starts it). */
export async function openTransport(cfg: NodeConfig): Promise<NodeTransport> {
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const [command, ...args] = cfg.exec;
  return new StdioClientTransport({ command: command!, args, env: nodeExecEnv(process.env), stderr: "pipe" });
}

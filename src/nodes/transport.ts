/**
 * How the coordinator reaches a node's MCP server: the seam a transport plugs into, chosen by the node's entry in
 * nodes.json. Two cases:
 * - stdio (`exec`): the operator's command (ssh, kubectl exec, …) spawned with MCP on its stdio, given what it
 *   needs of the environment (SSH_AUTH_SOCK, KUBECONFIG, …) and no secrets;
 * - Streamable HTTP (`url` + `token_file`): the node's own `serve --http`, a long-running server, with its bearer
 *   token read from an operator-owned file at each connection (never logged, never on a command line). A reconnection
 *   is a TCP connection and an initialize, not a server's start.
 * The link (link.ts) owns the rest: the client, the heartbeat, reconnection; it reads a process id and stderr where
 * the transport has them, and ends an HTTP session on the node when it lets the transport go.
 */
import { lstat, readFile } from "node:fs/promises";
import type { Stream } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { NodeConfig } from "./config.js";
import { nodeExecEnv } from "./exec-env.js";

/** An SDK transport to one node, with the exec command's process id and stderr when it has a process. */
export type NodeTransport = Transport & {
  readonly pid?: number | null;
  readonly stderr?: Stream | null;
  terminateSession?(): Promise<void>;
};

/** Opens a transport to a node: openTransport itself, or (in tests) one end of the SDK's in-memory pair. */
export type OpenTransport = (cfg: NodeConfig) => Promise<NodeTransport>;

/** A new transport to the node `cfg` names (not yet started: the SDK client's connect starts it). */
export async function openTransport(cfg: NodeConfig): Promise<NodeTransport> {
  if (cfg.url !== undefined) return openHttp(cfg.url, cfg.token_file!);
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const [command, ...args] = cfg.exec!;
  return new StdioClientTransport({ command: command!, args, env: nodeExecEnv(process.env), stderr: "pipe" });
}

async function openHttp(url: string, tokenFile: string): Promise<NodeTransport> {
  const token = await readToken(tokenFile);
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  // The server-to-client stream (notices, resource updates) is re-opened by the SDK a few times; past that the
  // heartbeat's next ping decides whether the node is still there.
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    reconnectionOptions: {
      initialReconnectionDelay: 250,
      maxReconnectionDelay: 2000,
      reconnectionDelayGrowFactor: 2,
      maxRetries: 5,
    },
  });
}

/**
 * A node's bearer token from its token file: a regular file of this server's user that nobody else may read or
 * write (a token others can read is no secret, one they can write lets them choose where calls go), holding one line
 * of at least 16 printable characters. Throws saying which rule the file breaks, never what it holds.
 */
export async function readToken(path: string): Promise<string> {
  const st = await lstat(path).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`its token file ${path} cannot be read (${e.code ?? String(e)})`);
  });
  const me = process.getuid?.();
  if (!st.isFile()) throw new Error(`its token file ${path} is not a regular file`);
  if ((me !== undefined && st.uid !== me) || st.mode & 0o077) {
    throw new Error(
      `its token file ${path} cannot be trusted: it must belong to this server's user with mode 0600 (mode ${(st.mode & 0o777).toString(8)}, uid ${st.uid})`,
    );
  }
  const token = (await readFile(path, "utf8")).trim();
  if (token.length < 16 || /[^\x21-\x7e]/.test(token))
    throw new Error(`its token file ${path} does not hold a token (one line of at least 16 printable characters)`);
  return token;
}

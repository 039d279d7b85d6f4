/**
 * nodes.json: the other machines this server coordinates, each reached by one operator-given command that speaks
 * MCP on stdio to that machine's claude-sessions (usually ssh), or at the URL of its `serve --http` with a bearer
 * token read from an operator-owned file. Only the operator writes it: it is read from
 * CLAUDE_SESSIONS_NODES (default <state>/nodes.json), must belong to this server's user and not be writable by
 * others, and is validated strictly. Nothing a tool caller sends ever becomes part of these argv arrays.
 */
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { nodeName } from "../api/index.js";

/** Names a tool argument uses for something other than a configured node. */
export const RESERVED_NODE_NAMES = ["local", "auto", "all"] as const;

const arg = z
  .string()
  .min(1)
  .max(4096)
  .refine((s) => !/[\0\n\r]/.test(s), "an argument has no NUL or line breaks");

/** Whether an argv runs ssh (by its program's name): its options end only at `--`. */
function isSsh(argv: readonly string[]): boolean {
  return /(^|\/)ssh$/.test(argv[0] ?? "");
}

/** A node's `serve --http` address: http(s), no credentials or fragment in it (the token comes from token_file). */
const nodeUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === "http:" || u.protocol === "https:") && !u.username && !u.password && !u.hash;
    } catch {
      return false;
    }
  }, "an http(s) URL of a node's serve --http endpoint (…/mcp), with no user, password or #fragment in it");

const nodeEntry = z
  .strictObject({
    exec: z
      .array(arg)
      .min(1)
      .max(100)
      .optional()
      .describe("The command (argv, no shell) that runs the node's claude-sessions with MCP on its stdin/stdout."),
    url: nodeUrl.optional().describe("Instead of exec: the node's `serve --http` MCP endpoint (Streamable HTTP)."),
    token_file: z
      .string()
      .max(4096)
      .refine((p) => isAbsolute(p) && !/[\0\n\r]/.test(p), "an absolute path")
      .optional()
      .describe(
        "With url: a file (this user's, mode 0600) holding the node's bearer token; read at each connection, never logged.",
      ),
    attach: z
      .array(arg)
      .min(1)
      .max(100)
      // ssh reads options after the host too: without `--` a word after the prefix could be taken as one.
      .refine(
        (a) => !isSsh(a) || a[a.length - 1] === "--",
        'an ssh "attach" prefix ends with "--" (e.g. ["ssh", "-t", "host", "--"])',
      )
      .optional()
      .describe("A prefix that runs a terminal command on the node (e.g. ssh -t host --), for attach_command."),
  })
  .refine(
    (e) => (e.exec === undefined) !== (e.url === undefined),
    'a node has either "exec" (a command) or "url" (its serve --http), not both',
  )
  .refine((e) => (e.url === undefined) === (e.token_file === undefined), '"token_file" goes with "url" (and a url needs one)');

const nodesFile = z.strictObject({ nodes: z.record(z.string(), nodeEntry) });

/** Why `name` is not a node name (undefined: it is one). */
export function badName(name: string): string | undefined {
  if ((RESERVED_NODE_NAMES as readonly string[]).includes(name)) return `"local", "auto" and "all" are not node names`;
  const r = nodeName.safeParse(name);
  return r.success ? undefined : `${r.error.issues[0]?.message ?? "not a node name"} (at most 32)`;
}

export type NodeEntry = z.infer<typeof nodeEntry>;
export interface NodeConfig extends NodeEntry {
  name: string;
}

/** Where nodes.json is: CLAUDE_SESSIONS_NODES (Config.nodesFile), else <state>/nodes.json. `explicit`: the operator named it (it must exist). */
export function nodesPath(file: string | undefined, stateDir: string): { path: string; explicit: boolean } {
  return file ? { path: resolve(file), explicit: true } : { path: join(stateDir, "nodes.json"), explicit: false };
}

/** Parses and checks the text of nodes.json; throws an Error naming the file and the problem. */
export function parseNodes(text: string, path: string): NodeConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`);
  }
  const r = nodesFile.safeParse(raw);
  if (!r.success) {
    const why = r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(file)"}: ${i.message}`).join("; ");
    throw new Error(
      `${path} is not a valid nodes file: ${why}. Expected {"nodes": {"<name>": {"exec": ["ssh", "host", "--", "claude-sessions"], ` +
        `"attach": ["ssh", "-t", "host", "--"]}}} (or {"url": "http://host:port/mcp", "token_file": "/path"} for a node's ` +
        `serve --http).`,
    );
  }
  for (const name of Object.keys(r.data.nodes)) {
    const why = badName(name);
    if (why) throw new Error(`${path} is not a valid nodes file: ${JSON.stringify(name.slice(0, 64))}: ${why}.`);
  }
  return Object.entries(r.data.nodes).map(([name, e]) => ({ name, ...e }));
}

/** Reads nodes.json (none when the default file does not exist). The file must be the operator's own. */
export async function loadNodes(file: string | undefined, stateDir: string): Promise<NodeConfig[]> {
  const { path, explicit } = nodesPath(file, stateDir);
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT" && !explicit) return undefined;
    throw new Error(`CLAUDE_SESSIONS_NODES: ${path} cannot be read (${e.code ?? String(e)})`);
  });
  if (!st) return [];
  if (!st.isFile()) throw new Error(`${path} is not a file`);
  const me = process.getuid?.();
  // Its argv arrays are run by this server: a file someone else can write would run their commands.
  if ((me !== undefined && st.uid !== me && st.uid !== 0) || st.mode & 0o022) {
    throw new Error(
      `${path} cannot be trusted: it must belong to this server's user and not be writable by group or others (mode ${(st.mode & 0o777).toString(8)}, ` +
        `uid ${st.uid}). Fix: chmod 600 ${JSON.stringify(path)}`,
    );
  }
  return parseNodes(await readFile(path, "utf8"), path);
}

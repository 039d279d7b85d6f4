/** Adds one node's entry to nodes.json (the operator's file, mode 0600), keeping every other entry as it was. */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { SessionError } from "../../core/errors.js";
import { writeFileWhole } from "../../util/fs/atomic.js";
import { loadNodes, nodesPath, parseNodes, type NodeEntry } from "../config.js";

/** Whether nodes.json already names `name` (the file is read with the same checks the server makes). */
export async function nodeExists(file: string | undefined, stateDir: string, name: string): Promise<boolean> {
  return (await current(file, stateDir)).some((n) => n.name === name);
}

/** The nodes of nodes.json; none while it does not exist yet (CLAUDE_SESSIONS_NODES may name a file to be made). */
async function current(file: string | undefined, stateDir: string) {
  return existsSync(nodesPath(file, stateDir).path) ? loadNodes(file, stateDir) : [];
}

/**
 * Writes `entry` as node `name`: refused (ALREADY_EXISTS) when the name is taken, unless `replace`. The result is
 * checked as the server would read it before it replaces the file. Returns the file's path.
 */
export async function writeNodeEntry(
  file: string | undefined,
  stateDir: string,
  name: string,
  entry: NodeEntry,
  replace: boolean,
): Promise<string> {
  const { path } = nodesPath(file, stateDir);
  const existing = await current(file, stateDir);
  if (existing.some((n) => n.name === name) && !replace) throw taken(name, path);
  const raw = existing.length
    ? (JSON.parse(await readFile(path, "utf8")) as { nodes: Record<string, NodeEntry> })
    : { nodes: {} };
  raw.nodes[name] = entry;
  const text = JSON.stringify(raw, null, 2) + "\n";
  parseNodes(text, path);
  await writeFileWhole(path, text, 0o600);
  return path;
}

export function taken(name: string, path: string): SessionError {
  return new SessionError("ALREADY_EXISTS", `node ${name} is already in ${path}`, {
    suggestion: "Choose another name, or pass --replace to overwrite its entry.",
  });
}

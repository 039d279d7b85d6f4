/**
 * The roots an MCP client declares (the `roots` capability): read with roots/list the first time a call needs them,
 * kept until the client says they changed (notifications/roots/list_changed). Only `file://` roots that exist count,
 * as real paths; a client that declares the capability and lists none confines nothing (docs/security.md).
 */
import { realpath } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

/** How long a client may take to answer roots/list before the call that needs them fails. */
const ROOTS_TIMEOUT_MS = 5_000;

export function clientRootsOf(server: Server): () => Promise<readonly string[] | undefined> {
  let cached: Promise<readonly string[] | undefined> | undefined;
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    cached = undefined;
  });
  return () => {
    if (!server.getClientCapabilities()?.roots) return Promise.resolve(undefined);
    const p = (cached ??= read(server));
    // A failed read is not kept: the next call asks again.
    p.catch(() => {
      if (cached === p) cached = undefined;
    });
    return p;
  };
}

async function read(server: Server): Promise<readonly string[] | undefined> {
  const { roots } = await server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS });
  const out: string[] = [];
  for (const r of roots) {
    if (!r.uri.startsWith("file://")) continue;
    try {
      out.push(await realpath(fileURLToPath(r.uri)));
    } catch {
      // A root that does not exist here holds no folder a session could work in.
    }
  }
  return roots.length ? [...new Set(out)] : undefined;
}

/**
 * A node's link on the SDK's in-memory pair (the transport seam, issue 35 item 5): no process, no network. The
 * node is an McpServer in this process; the link's calls, typed errors, outage and hedged reconnection run as they
 * do over ssh or HTTP.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import { NodeLink } from "../../src/nodes/link.js";
import type { NodeTransport } from "../../src/nodes/transport.js";
import { createLogger } from "../../src/util/log.js";

const log = createLogger({ level: "error" });
const fast = {
  heartbeatMs: 50,
  pingTimeoutMs: 200,
  connectTimeoutMs: 2000,
  backoffMinMs: 10,
  backoffMaxMs: 40,
  hedgeMs: 50,
  maxAttempts: 3,
  stuckMs: 150,
};

/** A node: each connection a new McpServer on one end of an in-memory pair; `hang` makes new connections never answer. */
function memoryNode() {
  const node = { opened: 0, hang: false, servers: [] as McpServer[] };
  const open = async (): Promise<NodeTransport> => {
    node.opened++;
    const [client, server] = InMemoryTransport.createLinkedPair();
    if (node.hang) return client; // nobody on the other end: initialize is never answered
    const s = new McpServer({ name: "claude-sessions", version: "1.2.3" });
    s.registerTool("list_sessions", { inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "{}" }],
      structuredContent: { sessions: [], total_count: 0 },
    }));
    s.registerTool("send_message", { inputSchema: {} }, async () => ({
      isError: true,
      content: [
        {
          type: "text",
          text: JSON.stringify({ error: { code: "SESSION_NOT_FOUND", message: "no session nope", suggestion: "list_sessions" } }),
        },
      ],
    }));
    await s.connect(server);
    node.servers.push(s);
    return client;
  };
  return { node, open };
}

describe("a node's link over the in-memory transport", () => {
  const links: NodeLink[] = [];
  afterEach(async () => {
    await Promise.all(links.splice(0).map((l) => l.close()));
  });

  it("calls answer, the node's errors come back typed, a lost link fails calls at once and comes back by itself", async () => {
    const { node, open } = memoryNode();
    const l = new NodeLink({ name: "mem", exec: ["unused"] }, log, {}, fast, "0.0.0", open);
    links.push(l);
    l.start();
    expect(await l.call("list_sessions", {})).toEqual({ sessions: [], total_count: 0 });
    expect(l.version).toBe("1.2.3");
    const e = await l.call("send_message", {}).catch((x: unknown) => x as SessionError);
    expect(e).toMatchObject({ code: "SESSION_NOT_FOUND", details: { node: "mem" } });

    // The node goes away: the link is lost, calls fail with NODE_UNREACHABLE, and a new connection is made.
    await node.servers[0]!.close();
    await expect.poll(() => l.status).not.toBe("reachable");
    await expect.poll(() => l.status, { timeout: 5000 }).toBe("reachable");
    expect(node.opened).toBeGreaterThanOrEqual(2);
    expect(await l.call("list_sessions", {})).toEqual({ sessions: [], total_count: 0 });
  });

  it("a first connection is one attempt at a time, however long it takes", async () => {
    const { node, open } = memoryNode();
    node.hang = true;
    const l = new NodeLink({ name: "mem", exec: ["unused"] }, log, {}, { ...fast, connectTimeoutMs: 400 }, "0.0.0", open);
    links.push(l);
    l.start();
    await new Promise((ok) => setTimeout(ok, 300));
    expect(node.opened).toBe(1);
    expect(l.pendingAttempts).toBe(1);
  });

  it("reconnection attempts that hang do not hold the link down: another starts beside them, the first to answer wins, at most maxAttempts pend", async () => {
    const { node, open } = memoryNode();
    const l = new NodeLink({ name: "mem", exec: ["unused"] }, log, {}, fast, "0.0.0", open);
    links.push(l);
    l.start();
    await expect.poll(() => l.status).toBe("reachable");
    // The node goes away, and new connections to it hang (a cut network).
    node.hang = true;
    await node.servers[0]!.close();
    await expect.poll(() => node.opened, { timeout: 5000 }).toBeGreaterThanOrEqual(5);
    expect(l.pendingAttempts).toBeLessThanOrEqual(fast.maxAttempts);
    expect(l.status).not.toBe("reachable");
    node.hang = false;
    const t0 = Date.now();
    await expect.poll(() => l.status, { timeout: 5000 }).toBe("reachable");
    // Within a hedge interval (and its jitter) of the node answering again, not after the hung ones time out (2 s).
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(l.pendingAttempts).toBe(0);
  });
});

/**
 * One node's link against real processes, no root needed: a "node" here is the built server with a world of its own,
 * reached through `env` instead of ssh. A command that fails is NODE_UNREACHABLE with what it said; the node's own
 * errors come back typed; a node that stops answering (SIGSTOP) is found by the heartbeat, its call in flight fails
 * at once, and the link comes back by itself with a new process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import { NodeLink } from "../../src/nodes/link.js";
import { createLogger } from "../../src/util/log.js";
import { makeWorld, tmuxOrSkip, until, type World } from "../helpers/harness.js";
import { loopbackExec } from "../helpers/test-hosts.mjs";

const log = createLogger({ level: "error" });
const fast = { heartbeatMs: 200, pingTimeoutMs: 600, connectTimeoutMs: 15_000, backoffMinMs: 100, backoffMaxMs: 400 };

async function failure(p: Promise<unknown>): Promise<SessionError> {
  try {
    await p;
  } catch (e) {
    return e as SessionError;
  }
  throw new Error("expected a failure");
}

describe.skipIf(!tmuxOrSkip())("a node's link", () => {
  let w: World;
  const links: NodeLink[] = [];
  const link = (name: string, exec: string[]) => {
    const l = new NodeLink({ name, exec }, log, {}, fast);
    links.push(l);
    l.start();
    return l;
  };
  beforeAll(() => {
    w = makeWorld();
  });
  afterAll(async () => {
    await Promise.all(links.map((l) => l.close()));
    w.cleanup();
  });

  it("a command that exits is NODE_UNREACHABLE naming the node, with what it printed", async () => {
    const l = link("broken", ["sh", "-c", "echo 'ssh: connect to host b1 port 22: No route to host' >&2; exit 255"]);
    const e = await failure(l.call("list_sessions", {}));
    expect(e.code).toBe("NODE_UNREACHABLE");
    expect(e.retryable).toBe(true);
    expect(e.message).toContain("node broken");
    expect(e.message).toContain("No route to host");
    expect(e.details).toEqual({ node: "broken" });
  });

  it("the node's errors come back as the same typed errors; a stopped node is found by the heartbeat and the link comes back", async () => {
    const l = link("n1", loopbackExec(w.env));
    const listed = await l.call("list_sessions", {});
    expect(listed).toMatchObject({ sessions: [], total_count: 0 });
    expect(l.version).toMatch(/^\d+\.\d+\.\d+/);
    const nf = await failure(l.call("send_message", { session_id: "nope", message: "hi" }));
    expect(nf.code).toBe("SESSION_NOT_FOUND");
    expect(nf.details).toMatchObject({ node: "n1" });

    const pid = l.pid!;
    process.kill(pid, "SIGSTOP");
    try {
      // A call in flight when the node stops answering fails with the outage, not after its own time-out.
      const e = await failure(l.call("wait_for_sessions", { session_ids: ["nope"], timeout_ms: 60_000 }));
      expect(e.code).toBe("NODE_UNREACHABLE");
      expect(e.message).toMatch(/no answer to a ping/);
      expect(l.status).not.toBe("reachable");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await until(() => l.status === "reachable", 20_000);
    expect(l.pid).not.toBe(pid);
    expect(await l.call("list_sessions", {})).toMatchObject({ total_count: 0 });
  });
});

/**
 * One node's link against real processes, no root needed: a "node" here is the built server with a world of its own,
 * reached through `env` instead of ssh. A command that fails is NODE_UNREACHABLE with what it said; the node's own
 * errors come back typed; a node that stops answering (SIGSTOP) is found by the heartbeat, its call in flight fails
 * at once, and the link comes back by itself with a new process.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import { NodeLink } from "../../src/nodes/link.js";
import { createLogger } from "../../src/util/log.js";
import { CLI, connect, makeWorld, tmuxOrSkip, until, type World } from "../helpers/harness.js";
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

  it("a bad nodes.json stops the server with the reason, and doctor says so; a node name no file has is refused", async () => {
    const w = makeWorld();
    try {
      const p = join(w.root, "bad-nodes.json");
      writeFileSync(p, JSON.stringify({ nodes: { "h1; rm -rf /": { exec: ["ssh", "h1"] } } }), { mode: 0o600 });
      const env = { ...w.env, CLAUDE_SESSIONS_NODES: p };
      const serve = spawnSync(process.execPath, [CLI, "serve"], { env, encoding: "utf8", input: "", timeout: 30_000 });
      expect(serve.status).toBe(1);
      expect(serve.stderr).toContain(`${p} is not a valid nodes file`);
      const doctor = spawnSync(process.execPath, [CLI, "doctor"], { env, encoding: "utf8", timeout: 30_000 });
      expect(doctor.status).toBe(1);
      expect(doctor.stdout).toMatch(/^down nodes: .*is not a valid nodes file/m);
      const none = spawnSync(process.execPath, [CLI, "doctor"], { env: w.env, encoding: "utf8", timeout: 30_000 });
      expect(none.stdout).toMatch(/^ok {3}nodes: none configured$/m);
      const m = await connect(w);
      try {
        const r = await m.call("start_session", { cwd: w.work, node: "h1" });
        expect(r.error?.code).toBe("INVALID_ARGUMENT");
        expect(r.error?.suggestion).toContain("no nodes configured");
        expect((await m.call("list_sessions", { node_filter: "h1" })).error?.code).toBe("INVALID_ARGUMENT");
        // "local" and "auto" mean this machine when it is the only one.
        const s = await m.callOk("start_session", { cwd: w.work, node: "auto" });
        expect(s.node).toBeUndefined();
        expect((await m.callOk("list_sessions", { node_filter: "local" })).nodes).toBeUndefined();
        await m.callOk("kill_session", { session_id: s.session_id });
      } finally {
        await m.close();
      }
    } finally {
      w.cleanup();
    }
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

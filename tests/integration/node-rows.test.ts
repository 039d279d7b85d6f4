/**
 * The coordinator's listing served from the rows its nodes push (issue 36), over two test hosts (network namespaces
 * running sshd, reached with real ssh): a node that is slow to answer — its server stopped (SIGSTOP) while its link
 * is still up — does not hold up list_sessions, whose rows of it are those it last pushed; and the rows are never
 * staler than the push channel: a change on a node (a turn through the coordinator, a kill made on the node by its
 * own CLI, not through the coordinator) is in the very next listing once its notice has reached the client.
 */
import { readFileSync, readdirSync } from "node:fs";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { makeTestHosts, testHostsOrSkip, writeNodesFile, type TestHost, type TestHosts } from "../helpers/test-hosts.mjs";

const enabled = tmuxOrSkip() && testHostsOrSkip();

/** The node's server processes the coordinator's link runs (`… dist/bin.js` as the host's user, read from /proc). */
function nodeServers(h: TestHost): number[] {
  const uid = Number(
    /^\S+:[^:]*:(\d+):/m.exec(
      readFileSync("/etc/passwd", "utf8")
        .split("\n")
        .find((l) => l.startsWith(`${h.user}:`))!,
    )![1],
  );
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const owner = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1]);
      const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
      if (owner === uid && argv.some((a) => a.endsWith("/dist/bin.js")) && argv.length <= 4) out.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return out;
}

describe.skipIf(!enabled)("the listing served from the nodes' pushed rows", () => {
  let hosts: TestHosts;
  let h1: TestHost;
  let h2: TestHost;
  let w: World;
  let m: Mcp;
  const notices: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    hosts = makeTestHosts(2, { tag: `r${process.pid % 1000}` });
    [h1, h2] = hosts.hosts as [TestHost, TestHost];
    w = makeWorld();
    w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, {
      h1: { exec: h1.exec, attach: h1.attach },
      h2: { exec: h2.exec, attach: h2.attach },
    });
    m = await connect(w);
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notices.push(n.params.data as Record<string, unknown>),
    );
  }, 120_000);

  afterAll(async () => {
    await m?.close().catch(() => {});
    w?.cleanup();
    hosts?.destroy();
  });

  const rowOf = async (id: string) => (await m.callOk("list_sessions", {})).sessions.find((r) => r.session_id === id);
  const noticeOf = (id: string, event: string, from: number) =>
    until(() => notices.slice(from).find((n) => n.session_id === id && n.event === event), 30_000);

  it("a change on a node is in the next listing once its notice has arrived: a turn, and a kill made on the node itself", async () => {
    const id = (await m.callOk("start_session", { cwd: h1.work, node: "h1" })).session_id;
    await until(async () => (await rowOf(id))?.status === "ready", 30_000, 100);
    const before = (await rowOf(id))!;
    // A turn through the coordinator: its end is pushed, and the next listing shows it (served from the rows).
    let from = notices.length;
    await m.callOk("send_message", { session_id: id, message: "FAKE_SLOW:300 one turn", wait_for_response: false });
    await noticeOf(id, "turn_ended", from);
    const after = (await rowOf(id))!;
    expect(after.status).toBe("idle");
    expect((after as { turn_count: number }).turn_count).toBe((before as { turn_count: number }).turn_count + 1);
    // Listed again and again from memory: the same rows.
    expect((await rowOf(id))!).toEqual(after);
    // A kill made on the node by its own CLI, not through the coordinator: its server follows the session and pushes.
    from = notices.length;
    h1.ssh([...h1.exec.slice(h1.exec.indexOf("--") + 1), "kill", id]);
    await noticeOf(id, "dead", from);
    expect((await rowOf(id))?.status).toBe("dead");
  }, 120_000);

  it("a node that stops answering does not hold up the listing: its rows are those it last pushed", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await m.callOk("start_session", { cwd: h1.work, node: "h1" })).session_id);
    const other = (await m.callOk("start_session", { cwd: h2.work, node: "h2" })).session_id;
    await until(
      async () => {
        const l = await m.callOk("list_sessions", {});
        return [...ids, other].every((id) => l.sessions.find((r) => r.session_id === id)?.status === "ready");
      },
      60_000,
      100,
    );
    // Quiet: two listings in a row alike (no change of theirs still on its way).
    let last = "";
    await until(
      async () => {
        const now = JSON.stringify((await m.callOk("list_sessions", {})).sessions);
        const same = now === last;
        last = now;
        return same;
      },
      30_000,
      200,
    );
    const servers = nodeServers(h1);
    expect(servers.length).toBeGreaterThan(0);
    for (const pid of servers) process.kill(pid, "SIGSTOP");
    try {
      const t0 = Date.now();
      const l = await m.callOk("list_sessions", {});
      const took = Date.now() - t0;
      console.log(`list_sessions with h1's server stopped: ${took} ms`);
      // Before: the listing waited for h1 until its link was declared lost (a ping unanswered: 3–4 s) or 5 s.
      expect(took).toBeLessThan(2000);
      for (const id of ids) expect(l.sessions.find((r) => r.session_id === id)).toMatchObject({ node: "h1", status: "ready" });
      expect(l.sessions.find((r) => r.session_id === other)).toMatchObject({ node: "h2", status: "ready" });
      expect(l.sessions.find((r) => r.session_id === other)?.node_status).toBeUndefined();
    } finally {
      for (const pid of servers) process.kill(pid, "SIGCONT");
    }
    // h1 answers again (its link may have been lost meanwhile and come back), with the same sessions.
    await until(
      async () => {
        const l = await m.callOk("list_sessions", { node_filter: "h1" });
        return (
          l.nodes![0]!.status === "reachable" && ids.every((id) => l.sessions.some((r) => r.session_id === id && !r.node_status))
        );
      },
      60_000,
      200,
    );
    for (const id of [...ids, other]) await m.callOk("kill_session", { session_id: id });
  }, 180_000);
});

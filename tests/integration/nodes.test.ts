/**
 * Many hosts, one endpoint (issue #22): a coordinator (the built server, a real MCP client's view) with two test
 * hosts — network namespaces running sshd as users of their own, reached with real ssh — and its own machine.
 * Sessions on every node are started (by name and by "auto"), sent to, waited on, answered, streamed, killed and
 * resumed by id alone; resources/list names every machine's sessions; a team spans all three machines; a cut link gives NODE_UNREACHABLE while the other node keeps
 * working, and the same sessions answer once the link is back; a coordinator killed with -9 and restarted lists
 * every remote session with its exact status.
 */
import { spawnSync } from "node:child_process";
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { startHttpServer } from "../helpers/http.js";
import { makeTestHosts, testHostsOrSkip, writeNodesFile, type TestHost, type TestHosts } from "../helpers/test-hosts.mjs";

const enabled = tmuxOrSkip() && testHostsOrSkip();

interface Row {
  session_id: string;
  status: string;
  node?: string;
  node_status?: string;
  team_name?: string;
}

describe.skipIf(!enabled)("sessions on other machines through ssh", () => {
  let hosts: TestHosts;
  let h1: TestHost;
  let h2: TestHost;
  let w: World;
  let m: Mcp;
  const notices: Array<{ level: string; data: Record<string, unknown> }> = [];
  const updated: string[] = [];
  let listChanges = 0;

  const open = async () => {
    const c = await connect(w);
    c.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notices.push({ level: n.params.level, data: n.params.data as Record<string, unknown> }),
    );
    c.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    c.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanges++);
    return c;
  };

  beforeAll(async () => {
    // h2 has room for more sessions than h1 and this machine: "auto" picks it.
    hosts = makeTestHosts(2, { env: { MAX_CONCURRENT_SESSIONS: "30" } });
    [h1, h2] = hosts.hosts as [TestHost, TestHost];
    w = makeWorld({ MAX_CONCURRENT_SESSIONS: "5" });
    w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, {
      h1: { exec: h1.exec, attach: h1.attach },
      h2: {
        exec: h2.exec.map((a) => (a === "MAX_CONCURRENT_SESSIONS=30" ? "MAX_CONCURRENT_SESSIONS=40" : a)),
        attach: h2.attach,
      },
    });
    m = await open();
  });

  afterAll(async () => {
    await m?.close().catch(() => {});
    w?.cleanup();
    hosts?.destroy();
  });

  const list = async (args: Record<string, unknown> = {}) => m.callOk("list_sessions", args);
  /** resources/list's URIs and titles, by URI. */
  const resourceList = async (opts: { timeout?: number } = {}): Promise<Map<string, Resource>> =>
    new Map((await m.client.listResources({}, opts)).resources.map((r) => [r.uri, r]));
  const kinds = (id: string) => [
    `session://${id}`,
    `session://${id}/screen`,
    `session://${id}/transcript`,
    `session://${id}/events`,
  ];

  it("lists every node with its link and version; an unknown node is refused", async () => {
    const l = await list();
    expect(l.nodes!.map((n) => [n.name, n.status])).toEqual([
      ["h1", "reachable"],
      ["h2", "reachable"],
    ]);
    expect(l.nodes![0]!.version).toMatch(/^\d+\.\d+\.\d+/);
    const bad = await m.call("start_session", { cwd: "/tmp", node: "h9" });
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
    expect(bad.error?.suggestion).toContain("h1, h2");
    // A node argument is a name, never part of a command.
    for (const node of ["h1; touch /tmp/x", "-oProxyCommand=x", "H1", "h1 h2", "$(id)"]) {
      expect((await m.call("start_session", { cwd: "/tmp", node })).error?.code).toBe("INVALID_ARGUMENT");
    }
    expect((await m.call("list_sessions", { node_filter: "nope" })).error?.code).toBe("INVALID_ARGUMENT");
    const h = await m.callOk("health_check");
    expect(h.checks.filter((c) => c.name.startsWith("node "))).toEqual([
      expect.objectContaining({ name: "node h1", status: "ok", detail: expect.stringContaining("0 live of 30") }),
      expect.objectContaining({ name: "node h2", status: "ok", detail: expect.stringContaining("0 live of 40") }),
    ]);
  });

  let s1 = "";
  it("start on a named node: send, wait, stream by id alone; attach_command goes through the node", async () => {
    const s = await m.callOk("start_session", { cwd: h1.work, node: "h1" });
    s1 = s.session_id;
    expect(s.node).toBe("h1");
    expect(s.attach_command).toBe(`${h1.attach.join(" ")} tmux -L ${h1.socket} attach -t =cs-${s1}`);
    // The session runs on h1, under h1's user, in h1's tmux server.
    expect(h1.ssh(["tmux", "-L", h1.socket, "list-sessions", "-F", "#{session_name}"])).toContain(`cs-${s1}`);
    const r = await m.callOk("send_message", { session_id: s1, message: "hello far away" });
    expect(r).toMatchObject({ response: "FAKE REPLY: hello far away", node: "h1" });
    await m.callOk("send_message", { session_id: s1, message: "FAKE_SLOW:400 slowly", wait_for_response: false });
    const progress: unknown[] = [];
    const done = await m.callOk(
      "wait_for_completion",
      { session_id: s1, timeout_ms: 15_000 },
      { onprogress: (p) => progress.push(p) },
    );
    expect(done).toMatchObject({ completed: true, last_response: "FAKE REPLY: FAKE_SLOW:400 slowly", node: "h1" });
    const t = await m.callOk("stream_output", { session_id: s1, mode: "transcript" });
    expect(t.node).toBe("h1");
    expect(t.items!.map((i) => i.text)).toContain("FAKE REPLY: hello far away");
    const row = (await list()).sessions.find((x) => x.session_id === s1);
    expect(row).toMatchObject({ node: "h1", status: "idle" });
    const onlyH1 = await list({ node_filter: "h1" });
    expect(onlyH1.sessions.map((x) => x.session_id)).toEqual([s1]);
    // A remote session's resource is read through its node.
    const res = await m.client.readResource({ uri: `session://${s1}` });
    expect(JSON.parse((res.contents[0] as { text: string }).text)).toMatchObject({ session_id: s1, status: "idle" });
  });

  it("a remote session's resources: subscribed through its node, updated by its turns", async () => {
    await m.client.subscribeResource({ uri: `session://${s1}` });
    await m.client.subscribeResource({ uri: `session://${s1}/transcript` });
    updated.length = 0;
    // wait_for_usage: the reply's transcript line has landed when the call returns (send_message alone returns at Stop).
    await m.callOk("send_message", { session_id: s1, message: "watched", wait_for_usage: true });
    await until(() => updated.includes(`session://${s1}`) && updated.includes(`session://${s1}/transcript`), 10_000);
    const t = await m.client.readResource({ uri: `session://${s1}/transcript` });
    expect((t.contents[0] as { text: string }).text).toContain("FAKE REPLY: watched");
  });

  it("resources/list names every machine's sessions (… on <node>); a remote start and end are list changes", async () => {
    const listed = await resourceList();
    for (const uri of kinds(s1)) expect(listed.get(uri)?.title).toMatch(new RegExp(`: ${s1} on h1$`));
    // What a browsing client reads from the list is that session's, from its node.
    const summary = await m.client.readResource({ uri: `session://${s1}` });
    expect(JSON.parse((summary.contents[0] as { text: string }).text)).toMatchObject({ session_id: s1, status: "idle" });
    const t = await m.client.readResource({ uri: [...listed.keys()].find((u) => u === `session://${s1}/transcript`)! });
    expect((t.contents[0] as { text: string }).text).toContain("FAKE REPLY: watched");
    // No session runs here yet: a list change now is h2's.
    listChanges = 0;
    const s2 = (await m.callOk("start_session", { cwd: h2.work, node: "h2" })).session_id;
    await until(() => listChanges > 0, 10_000);
    const withS2 = await resourceList();
    expect(kinds(s2).map((u) => withS2.get(u)?.name)).toEqual(
      ["session", "session-screen", "session-transcript", "session-events"].map((n) => `${n} ${s2} on h2`),
    );
    listChanges = 0;
    await m.callOk("kill_session", { session_id: s2, save_state: true });
    await until(() => listChanges > 0, 10_000);
    // Ended: no screen, as for a session here.
    const ended = await resourceList();
    expect(ended.has(`session://${s2}`)).toBe(true);
    expect(ended.has(`session://${s2}/screen`)).toBe(false);
  });

  it('start with node "auto" lands on the node with the most free slots', async () => {
    const s = await m.callOk("start_session", { cwd: "/tmp", node: "auto" });
    expect(s.node).toBe("h2");
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "auto placed" });
    expect(r.response).toBe("FAKE REPLY: auto placed");
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("a remote permission request reaches the coordinator's client; respond_permission answers it on the node", async () => {
    notices.length = 0;
    await m.callOk("send_message", { session_id: s1, message: "FAKE_BASH:touch far.txt", wait_for_response: false });
    const n = await until(() => notices.find((x) => x.data.event === "permission" && x.data.session_id === s1), 15_000);
    expect(n.data).toMatchObject({ node: "h1", tool_name: "Bash", status: "waiting_for_permission" });
    const a = await m.callOk("respond_permission", { session_id: s1, decision: "allow" });
    expect(a).toMatchObject({ answered: true, node: "h1" });
    const done = await m.callOk("wait_for_completion", { session_id: s1, timeout_ms: 15_000 });
    expect(done.last_response).toBe("FAKE: ran touch far.txt");
    expect(h1.ssh(["ls", `${h1.work}/far.txt`]).trim()).toBe(`${h1.work}/far.txt`);
    await until(
      () => notices.find((x) => x.data.event === "turn_ended" && x.data.session_id === s1 && x.data.node === "h1"),
      10_000,
    );
  });

  it("kill and resume a remote session by id: the same conversation comes back on its node", async () => {
    const k = await m.callOk("kill_session", { session_id: s1 });
    expect(k).toMatchObject({ status: "killed", node: "h1" });
    expect((await list()).sessions.find((x) => x.session_id === s1)).toMatchObject({ status: "dead", node: "h1" });
    const r = await m.callOk("resume_session", { session_id: s1 });
    expect(r).toMatchObject({ session_id: s1, node: "h1" });
    const t = await m.callOk("stream_output", { session_id: s1, mode: "transcript" });
    expect(t.items!.map((i) => i.text)).toContain("FAKE REPLY: hello far away");
    expect((await m.callOk("send_message", { session_id: s1, message: "back again" })).response).toBe("FAKE REPLY: back again");
  });

  it("a team spanning three machines: broadcast and wait for all", async () => {
    const members = [
      await m.callOk("start_session", { cwd: w.dir("team-local"), team_name: "tri", teammate_name: "here" }),
      await m.callOk("start_session", { cwd: h1.work, node: "h1", team_name: "tri", teammate_name: "one" }),
      await m.callOk("start_session", { cwd: h2.work, node: "h2", team_name: "tri", teammate_name: "two" }),
    ];
    const b = await m.callOk("broadcast_message", { team_name: "tri", message: "all hands" });
    expect(b).toMatchObject({ sent_count: 3, failed_count: 0 });
    expect(b.results.map((x) => [x.node ?? "local", x.response]).sort()).toEqual([
      ["h1", "FAKE REPLY: all hands"],
      ["h2", "FAKE REPLY: all hands"],
      ["local", "FAKE REPLY: all hands"],
    ]);
    // By teammate name alone, wherever it runs.
    expect((await m.callOk("send_message", { team_name: "tri", teammate_name: "two", message: "just you" })).node).toBe("h2");
    await m.callOk("broadcast_message", { team_name: "tri", message: "FAKE_SLOW:300 work", wait_for_response: false });
    const waited = await m.callOk("wait_for_sessions", { team_name: "tri", mode: "all", timeout_ms: 20_000 });
    expect(waited.done).toBe(true);
    expect(waited.sessions.map((x) => x.session_id).sort()).toEqual(members.map((x) => x.session_id).sort());
    expect(waited.sessions.every((x) => x.done && x.last_response === "FAKE REPLY: FAKE_SLOW:300 work")).toBe(true);
    const byIds = await m.callOk("wait_for_sessions", {
      session_ids: members.map((x) => x.session_id),
      mode: "any",
      timeout_ms: 5000,
    });
    expect(byIds).toMatchObject({ done: true });
    expect(byIds.sessions).toHaveLength(3);
    // sync_context of the team: one result per member, from every machine.
    const synced = await m.callOk("sync_context", { team_name: "tri", force: true, wait_for_response: false });
    expect(synced.results!.map((x) => x.node ?? "local").sort()).toEqual(["h1", "h2", "local"]);
    expect(synced.results!.map((x) => x.session_id).sort()).toEqual(members.map((x) => x.session_id).sort());
    await m.callOk("wait_for_sessions", { team_name: "tri", mode: "all", timeout_ms: 20_000 });
  });

  let h1Conversation = "";
  it("history across machines: h1's conversation is searched, listed and read from the coordinator, never indexed here", async () => {
    // s1 ran on h1 only: its words are found there, by the coordinator's search.
    const hit = await until(
      async () => (await m.callOk("search_conversations", { query: "far away" })).results.find((r) => r.node === "h1"),
      15_000,
      250,
    );
    expect(hit.snippet).toContain("**far**");
    const cid = hit.claude_session_id;
    h1Conversation = cid;
    const listed = await m.callOk("list_conversations", { limit: 200 });
    expect(listed.conversations.find((x) => x.claude_session_id === cid)).toMatchObject({ node: "h1", session_id: s1 });
    expect(listed.nodes!.map((n) => [n.name, n.status])).toEqual([
      ["h1", "reachable"],
      ["h2", "reachable"],
    ]);
    // Every machine's conversations (the team "tri" ran one here, one on h1, one on h2), newest first.
    await until(
      async () =>
        new Set((await m.callOk("list_conversations", { limit: 200 })).conversations.map((x) => x.node ?? "local")).size === 3,
      15_000,
      250,
    );
    const all = await m.callOk("list_conversations", { limit: 200 });
    expect(all.conversations.length).toBeGreaterThan(2);
    expect(all.total).toBe(all.conversations.length);
    const times = all.conversations.map((x) => x.last_activity ?? "");
    expect([...times].sort().reverse()).toEqual(times);
    // Paged two at a time, the same rows in the same order.
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const p = await m.callOk("list_conversations", { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(p.conversations.length).toBeLessThanOrEqual(2);
      paged.push(...p.conversations.map((x) => `${x.node ?? "local"}/${x.claude_session_id}`));
      cursor = p.next_cursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(all.conversations.map((x) => `${x.node ?? "local"}/${x.claude_session_id}`));
    // Its turns, read by id alone (found on h1) or with the row's node.
    for (const args of [{ claude_session_id: cid }, { claude_session_id: cid, node: "h1" }]) {
      const c = await m.callOk("get_conversation", { ...args, limit: 200 });
      expect(c.conversation).toMatchObject({ claude_session_id: cid, node: "h1" });
      expect(c.items.map((i) => i.text)).toContain("FAKE REPLY: hello far away");
    }
    // Never written into this machine's index.
    expect((await m.call("get_conversation", { claude_session_id: cid, node: "local" })).error?.code).toBe("SESSION_NOT_FOUND");
    // The turns the node ran: by session id (routed to h1), and in the merged history.
    const ex = await m.callOk("get_execution_history", { session_id: s1 });
    expect(ex.executions.map((e) => [e.node, e.prompt])).toContainEqual(["h1", "hello far away"]);
    const everyTurn = await m.callOk("get_execution_history", { limit: 500 });
    expect(new Set(everyTurn.executions.map((e) => e.node ?? "local"))).toEqual(new Set(["local", "h1", "h2"]));
    expect(everyTurn.total_count).toBe(everyTurn.executions.length);
  });

  it("resume_session with a node's search hit (its `resume`) adopts the conversation on that node, not here", async () => {
    const s = await m.callOk("start_session", { cwd: h1.work, node: "h1", prompt: "adopt me from afar" });
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 20_000 });
    await m.callOk("kill_session", { session_id: s.session_id });
    const hit = await until(
      async () => (await m.callOk("search_conversations", { query: "adopt afar" })).results.find((r) => r.node === "h1"),
      15_000,
      250,
    );
    expect(hit.resume.cwd).toBe(h1.work);
    const r = await m.callOk("resume_session", { claude_session_id: hit.resume.claude_session_id, cwd: hit.resume.cwd! });
    expect(r).toMatchObject({ node: "h1", session_id: s.session_id });
    expect(h1.ssh(["tmux", "-L", h1.socket, "list-sessions", "-F", "#{session_name}"])).toContain(`cs-${s.session_id}`);
    const again = await m.callOk("send_message", { session_id: s.session_id, message: "still there?" });
    expect(again).toMatchObject({ response: "FAKE REPLY: still there?", node: "h1" });
    // Nothing was adopted here.
    expect((await list({ node_filter: "local" })).sessions.some((x) => x.claude_session_id === hit.claude_session_id)).toBe(
      false,
    );
    await m.callOk("kill_session", { session_id: s.session_id, force: true });
  });

  it("the web view (serve --http) lists every machine's sessions with their node and drives a remote one", async () => {
    const token = "nodes-test-token-0123456789";
    const srv = await startHttpServer(w, { CLAUDE_SESSIONS_TOKEN: token });
    const auth = { authorization: `Bearer ${token}` };
    // The first event of a feed, read from the stream.
    const firstEvent = async (path: string, name: string): Promise<unknown> => {
      const ctl = new AbortController();
      const res = await fetch(`${srv.url}${path}`, { headers: auth, signal: ctl.signal });
      const reader = res.body!.getReader();
      let text = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the feed ended before ${name}: ${text}`);
          text += new TextDecoder().decode(value);
          const m = new RegExp(`event: ${name}\ndata: (.*)\n\n`).exec(text);
          if (m) return JSON.parse(m[1]!);
        }
      } finally {
        ctl.abort();
      }
    };
    try {
      const rows = (await firstEvent("/api/events", "snapshot")) as Row[];
      expect(rows.find((r) => r.session_id === s1)).toMatchObject({ node: "h1", status: "idle" });
      const page = (await firstEvent(`/api/sessions/${s1}/events`, "session")) as Row;
      expect(page).toMatchObject({ session_id: s1, node: "h1" });
      const sent = await fetch(`${srv.url}/api/sessions/${s1}/send`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ message: "from the page" }),
      });
      expect(sent.status).toBe(200);
      expect(await sent.json()).toMatchObject({ session_id: s1, node: "h1", message_sent: true });
      expect(await m.callOk("wait_for_completion", { session_id: s1, timeout_ms: 15_000 })).toMatchObject({
        last_response: "FAKE REPLY: from the page",
      });
    } finally {
      await srv.stop();
    }
  });

  it("the CLI: `nodes` reaches every node; `ls` shows every machine's sessions with their node", () => {
    const cli = (args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 60_000 });
    const n = cli(["nodes"]);
    expect(n.status, n.stderr).toBe(0);
    expect(n.stdout).toMatch(/^h1\treachable\tclaude-sessions \d+\.\d+\.\d+\thealth ok\t\d+ live of 30$/m);
    expect(n.stdout).toMatch(/^h2\treachable\t.*live of 40$/m);
    const ls = cli(["ls"]);
    expect(ls.status, ls.stderr).toBe(0);
    // node, session, status, backend, cost ($…, "-" before any usage, "?" without a price), cwd, attach command.
    const row = ls.stdout.split("\n").find((l) => l.startsWith(`h1\t${s1}\t`));
    expect(row?.split("\t")).toEqual([
      "h1",
      s1,
      "idle",
      "tmux",
      expect.stringMatching(/^(\$\d+\.\d+|-|\?)$/),
      h1.work,
      `${h1.attach.join(" ")} tmux -L ${h1.socket} attach -t =cs-${s1}`,
    ]);
    expect(ls.stdout).toMatch(/^local\t\w+\tidle\ttmux\t/m);
    // attach runs the node's prefix and its tmux attach: here without a terminal, so the node's tmux says so.
    const at = cli(["attach", s1]);
    expect(at.status).not.toBe(0);
    expect(at.stderr).toContain("open terminal failed: not a terminal");
  });

  it("a cut link: NODE_UNREACHABLE for its calls (a wait in flight too), the other node unaffected; back up, the same sessions answer", async () => {
    const on2 = await m.callOk("start_session", { cwd: h2.work, node: "h2" });
    await m.callOk("send_message", { session_id: s1, message: "FAKE_SLOW:60000 long turn", wait_for_response: false });
    const waiting = m.call("wait_for_completion", { session_id: s1, timeout_ms: 120_000 }, { timeout: 120_000 });
    let settled = false;
    void waiting.finally(() => (settled = true));
    // In flight at the node: a later call that went through h1's link has been answered, and the wait has not.
    expect((await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s1)).toMatchObject({ status: "busy" });
    expect(settled).toBe(false);
    const here = (await list({ node_filter: "local" })).sessions.map((x) => x.session_id);
    expect(here.length).toBeGreaterThan(0);
    const t0 = Date.now();
    h1.cut();
    // A node that stopped answering (not yet noticed) does not hold resources/list up: it answers well within the
    // outage's detection bound (1 s heartbeat + 3 s ping time-out) with this machine's sessions and h1's last known.
    const during = await resourceList({ timeout: 4000 });
    for (const id of here) expect(during.has(`session://${id}`)).toBe(true);
    expect(during.has(`session://${s1}`)).toBe(true);
    // A history call made before the outage is noticed answers once it is (not after its own 10 s per-node bound):
    // this machine's and h2's conversations, h1 named as not answering.
    const early = await m.call("list_conversations", { limit: 200 }, { timeout: 8000 });
    expect(early.error).toBeUndefined();
    expect(early.data!.nodes!.find((n) => n.name === "h1")?.status).toBe("unreachable");
    expect(early.data!.conversations.some((x) => x.node === "h2")).toBe(true);
    console.log(`list_conversations across nodes with h1 cut answered ${Date.now() - t0} ms after the cut`);
    const w1 = await waiting;
    const detected = Date.now() - t0;
    expect(w1.error?.code).toBe("NODE_UNREACHABLE");
    expect(w1.error?.retryable).toBe(true);
    expect(w1.error?.message).toContain("node h1");
    // Not a TCP time-out, not the end of the 60 s turn.
    expect(detected).toBeLessThan(30_000);
    console.log(`outage detected after ${detected} ms`);
    const s = await m.call("send_message", { session_id: s1, message: "anyone?" });
    expect(s.error?.code).toBe("NODE_UNREACHABLE");
    expect((await m.callOk("send_message", { session_id: on2.session_id, message: "still here" })).response).toBe(
      "FAKE REPLY: still here",
    );
    const l = await list();
    expect(l.nodes!.find((n) => n.name === "h1")).toMatchObject({
      status: "unreachable",
      error: expect.stringContaining("node h1"),
    });
    expect(l.sessions.find((x) => x.session_id === s1)).toMatchObject({ node: "h1", node_status: "unreachable", status: "busy" });
    // Noticed: h1's sessions stay listed as last known, saying so; reading one names the node that does not answer.
    const down = await resourceList({ timeout: 4000 });
    for (const id of here) expect(down.has(`session://${id}`)).toBe(true);
    expect(down.get(`session://${s1}`)?.description).toContain("Node h1 does not answer");
    expect(down.has(`session://${s1}/screen`)).toBe(true);
    await expect(m.client.readResource({ uri: `session://${s1}` })).rejects.toThrow(/NODE_UNREACHABLE/);
    // The history tools answer with this machine's and h2's, naming h1 as not answering.
    const convs = await m.callOk("list_conversations", { limit: 200 });
    expect(convs.nodes!.find((n) => n.name === "h1")).toMatchObject({
      status: "unreachable",
      error: expect.stringContaining("node h1"),
    });
    expect(new Set(convs.conversations.map((x) => x.node ?? "local"))).toEqual(new Set(["local", "h2"]));
    const found = await m.callOk("search_conversations", { query: "all hands" });
    expect(new Set(found.results.map((x) => x.node ?? "local"))).toEqual(new Set(["local", "h2"]));
    expect(found.nodes!.find((n) => n.name === "h1")?.status).toBe("unreachable");
    const turns = await m.callOk("get_execution_history", {});
    expect(turns.nodes!.find((n) => n.name === "h1")?.status).toBe("unreachable");
    expect(turns.executions.some((e) => e.node === "h2")).toBe(true);
    // h1's conversation is on no machine that answers: the retryable NODE_UNREACHABLE, not "not found".
    const gone = await m.call("get_conversation", { claude_session_id: h1Conversation });
    expect(gone.error?.code).toBe("NODE_UNREACHABLE");
    const h = await m.callOk("health_check");
    expect(h.checks.find((c) => c.name === "node h1")).toMatchObject({
      status: "degraded",
      detail: expect.stringMatching(/^unreachable: /),
    });
    h1.restore();
    await until(async () => (await list()).nodes!.find((n) => n.name === "h1")?.status === "reachable", 30_000, 250);
    // The session kept running on h1 through the outage: interrupt the long turn, then it answers again.
    await m.callOk("interrupt_session", { session_id: s1 });
    expect((await m.callOk("send_message", { session_id: s1, message: "after the outage" })).response).toBe(
      "FAKE REPLY: after the outage",
    );
  });

  it("the coordinator killed with -9 and restarted lists every remote session with its exact status", async () => {
    await m.callOk("send_message", {
      session_id: s1,
      message: "FAKE_SLOW:60000 busy through the restart",
      wait_for_response: false,
    });
    const before = (await list()).sessions
      .filter((x) => x.node)
      .map((x) => ({ session_id: x.session_id, status: x.status, node: x.node }));
    expect(before.length).toBeGreaterThanOrEqual(4);
    expect(before.find((x) => x.session_id === s1)?.status).toBe("busy");
    process.kill(m.pid!, "SIGKILL");
    await m.close().catch(() => {});
    m = await open();
    // Its links up, the new coordinator lists every node's sessions as resources before any list_sessions.
    await until(async () => (await resourceList()).has(`session://${s1}/screen`), 15_000, 250);
    const after = (await list()).sessions
      .filter((x) => x.node)
      .map((x) => ({ session_id: x.session_id, status: x.status, node: x.node }));
    expect(after.sort((a, b) => a.session_id.localeCompare(b.session_id))).toEqual(
      before.sort((a, b) => a.session_id.localeCompare(b.session_id)),
    );
    await m.callOk("interrupt_session", { session_id: s1 });
  });
});

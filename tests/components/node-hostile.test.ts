/**
 * A hostile or broken node, no root needed: the node is tests/fixtures/hostile-node.mjs, a small MCP server on stdio
 * that answers initialize and every ping and then does what its config says (bad rows, a hostile attach_command,
 * tools it never answers, a flood of notices, a capacity it does not have; it records the environment it was given).
 * The coordinator is the built server with a real MCP client. What a user checks: a node's words never run here, one
 * silent node never hangs a call, a bad row is dropped (the others kept), a flood reaches the client rate-limited,
 * `auto` does not believe a capacity the node does not have, and the node's command never sees this server's secrets.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { CLI, connect, FIXTURES, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { startHttpServer } from "../helpers/http.js";
import { loopbackExec, writeNodesFile } from "../helpers/test-hosts.mjs";

const HOSTILE = join(FIXTURES, "hostile-node.mjs");
/** In an attach prefix: the world's argv.txt. */
const ARGV_FILE = "<argv file>";

/** A session row as a node's list_sessions gives it (valid unless changed). */
function row(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    session_id: id,
    claude_session_id: `c-${id}`,
    status: "idle",
    backend: "tmux",
    survives_restart: true,
    cwd: "/srv",
    created_at: "2026-01-01T00:00:00.000Z",
    turn_count: 0,
    ...extra,
  };
}

interface Setup {
  w: World;
  m?: Mcp;
  /** The hostile node's config file. */
  cfg: string;
}

const made: Setup[] = [];

/** A coordinator world whose node "bad" is the hostile fake with `cfg`, plus `nodes` given as they are. */
function world(
  cfg: Record<string, unknown>,
  opts: { attach?: string[]; env?: Record<string, string>; nodes?: Record<string, { exec: string[]; attach?: string[] }> } = {},
): Setup {
  const w = makeWorld(opts.env ?? {});
  const path = join(w.root, "hostile.json");
  writeFileSync(path, JSON.stringify(cfg));
  if (opts.attach) opts.attach = opts.attach.map((a) => (a === ARGV_FILE ? join(w.root, "argv.txt") : a));
  w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, {
    bad: { exec: [process.execPath, HOSTILE, path], ...(opts.attach ? { attach: opts.attach } : {}) },
    ...opts.nodes,
  });
  const s: Setup = { w, cfg: path };
  made.push(s);
  return s;
}

afterEach(async () => {
  for (const s of made.splice(0)) {
    await s.m?.close().catch(() => {});
    s.w.cleanup();
  }
});

const cli = (w: World, args: string[], timeout = 60_000) =>
  spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout });

describe.skipIf(!tmuxOrSkip())("a hostile node", () => {
  afterAll(() => {});

  it("its attach_command never becomes a local command: the line is rebuilt from its tmux socket and the session's id", async () => {
    const s = world(
      {
        rows: [
          // An option where the socket goes, a line that is not tmux, another session's tmux session, and an honest one.
          row("hn-opt", { attach_command: "tmux -L '-oProxyCommand=touch /tmp/cs-pwned' attach -t =cs-hn-opt" }),
          row("hn-word", { attach_command: "-oProxyCommand=touch' '/tmp/cs-pwned attach -t =cs-hn-word" }),
          row("hn-other", { attach_command: "tmux -L cs-node attach -t =cs-hn-ok" }),
          row("hn-ok", { attach_command: "tmux -L 'cs-node' attach -t =cs-hn-ok" }),
        ],
      },
      // The operator's prefix here records the argv it is given (its first word after the script is the file).
      { attach: ["sh", "-c", 'printf "%s\\n" "$@" > "$0"', ARGV_FILE] },
    );
    const out = join(s.w.root, "argv.txt");
    s.m = await connect(s.w);
    const listed = await until(
      async () => {
        const l = await s.m!.callOk("list_sessions", { status_filter: "all" });
        return l.sessions.length === 4 ? l : undefined;
      },
      20_000,
      200,
    );
    const byId = new Map(listed.sessions.map((r) => [r.session_id, r as { attach_command?: string }]));
    expect(byId.get("hn-ok")!.attach_command).toBe(
      `sh -c 'printf "%s\\n" "$@" > "$0"' ${out} tmux -L cs-node attach -t =cs-hn-ok`,
    );
    for (const id of ["hn-opt", "hn-word", "hn-other"]) expect(byId.get(id)!.attach_command, id).toBeUndefined();

    // `claude-sessions attach`: the honest one runs the prefix with this server's own tmux attach …
    const ok = cli(s.w, ["attach", "hn-ok"]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(out, "utf8").split("\n").filter(Boolean)).toEqual(["tmux", "-L", "cs-node", "attach", "-t", "=cs-hn-ok"]);
    // … the others run nothing and say why.
    for (const id of ["hn-opt", "hn-word", "hn-other"]) {
      writeFileSync(out, "");
      const r = cli(s.w, ["attach", id]);
      expect(r.status, id).not.toBe(0);
      expect(r.stderr, id).toContain("cannot be attached to");
      expect(readFileSync(out, "utf8"), id).toBe("");
    }
    expect(existsSync("/tmp/cs-pwned")).toBe(false);
  }, 120_000);

  it("one that answers pings but never a tool hangs nothing: list_sessions, ls, the page, broadcast_message and auto answer in bounded time", async () => {
    // It answers the listing made when its link comes up, then no tool call ever again.
    const s = world({
      rows: [row("hn-far", { team_name: "t", teammate_name: "far" })],
      answer: { list_sessions: 1 },
      silent: "*",
    });
    s.m = await connect(s.w);
    const m = s.m;
    const near = await m.callOk("start_session", { cwd: s.w.work, team_name: "t", teammate_name: "near" });
    const timed = async <T>(p: Promise<T>): Promise<{ v: T; ms: number }> => {
      const t0 = Date.now();
      const v = await p;
      return { v, ms: Date.now() - t0 };
    };

    // list_sessions: this machine's sessions and the node's last known ones, the node named as not answering.
    const l = await timed(m.callOk("list_sessions", { status_filter: "all" }, { timeout: 60_000 }));
    expect(l.ms).toBeLessThan(15_000);
    expect(l.v.sessions.find((r) => r.session_id === "hn-far")).toMatchObject({
      node: "bad",
      node_status: "unreachable",
      status: "idle",
    });
    expect(l.v.sessions.some((r) => r.session_id === near.session_id)).toBe(true);
    expect(l.v.nodes).toEqual([
      expect.objectContaining({
        name: "bad",
        status: "unreachable",
        error: expect.stringContaining("did not answer list_sessions within 5000 ms"),
      }),
    ]);

    // broadcast_message to a team on both machines: this machine's member gets it, the silent node's is failed.
    const b = await timed(
      m.callOk(
        "broadcast_message",
        { team_name: "t", message: "hello", wait_for_response: false, timeout_ms: 1000 },
        { timeout: 90_000 },
      ),
    );
    expect(b.ms).toBeLessThan(40_000);
    const byId = new Map(b.v.results.map((r) => [r.session_id, r]));
    expect(byId.get(near.session_id)).toMatchObject({ message_sent: true });
    expect(byId.get("hn-far")).toMatchObject({ message_sent: false, node: "bad", error: { code: "NODE_UNREACHABLE" } });

    // health_check: a degraded check for the node, in bounded time.
    const h = await timed(m.callOk("health_check", {}, { timeout: 60_000 }));
    expect(h.ms).toBeLessThan(15_000);
    expect(h.v.checks.find((c) => c.name === "node bad")).toMatchObject({
      status: "degraded",
      detail: expect.stringContaining("did not answer health_check within 5000 ms"),
    });

    // node "auto": the silent node is left out, the session starts here.
    const a = await timed(m.callOk("start_session", { cwd: s.w.work, node: "auto" }, { timeout: 60_000 }));
    expect(a.ms).toBeLessThan(30_000);
    expect(a.v.node).toBeUndefined();

    // A call naming a session on it: NODE_UNREACHABLE after its bound (the call's own timeout_ms and a grace).
    const g = await timed(m.call("stream_output", { session_id: "hn-far", timeout_ms: 0 }, { timeout: 400_000 }));
    expect(g.v.error?.code).toBe("NODE_UNREACHABLE");
    expect(g.v.error?.message).toContain("did not answer stream_output within 15000 ms");
    expect(g.ms).toBeLessThan(40_000);

    // The CLI's ls (a coordinator of its own) and the web page's list feed.
    const t0 = Date.now();
    const ls = cli(s.w, ["ls", "--all"], 60_000);
    expect(ls.status, ls.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(ls.stdout).toMatch(/^bad \(unreachable\)\thn-far\tidle\t/m);
    const token = "hostile-node-test-token-0123456789";
    const srv = await startHttpServer(s.w, { CLAUDE_SESSIONS_TOKEN: token });
    try {
      const ctl = new AbortController();
      const t1 = Date.now();
      const res = await fetch(`${srv.url}/api/events`, { headers: { authorization: `Bearer ${token}` }, signal: ctl.signal });
      const reader = res.body!.getReader();
      let text = "";
      while (!/event: snapshot\n/.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the feed ended: ${text}`);
        text += new TextDecoder().decode(value);
      }
      ctl.abort();
      expect(Date.now() - t1).toBeLessThan(30_000);
      expect(text).toContain("hn-far");
    } finally {
      await srv.stop();
    }
  }, 300_000);

  it("one that is slow to answer does not hold up a call for a session another node has (an id the coordinator has not seen yet)", async () => {
    // "good" is the built server in a world of its own, reached through env; its session is started by a client of
    // its own (not through the coordinator), so the coordinator learns the id only by asking every node.
    const gw = makeWorld();
    try {
      const s = world(
        { rows: [], answer: { list_sessions: 1 }, silent: "*" },
        { nodes: { good: { exec: loopbackExec(gw.env) } } },
      );
      s.m = await connect(s.w);
      await until(
        async () =>
          (await s.m!.callOk("list_sessions", {}, { timeout: 60_000 })).nodes!.find((n) => n.name === "good")?.status ===
          "reachable",
        30_000,
        200,
      );
      const direct = await connect(gw);
      const id = (await direct.callOk("start_session", { cwd: gw.work })).session_id;
      await direct.close();
      const t0 = Date.now();
      const r = await s.m.callOk("send_message", { session_id: id, message: "found" }, { timeout: 60_000 });
      const ms = Date.now() - t0;
      console.log(`a session on "good" answered in ${ms} ms with "bad" silent`);
      expect(r).toMatchObject({ response: "FAKE REPLY: found", node: "good" });
      // Before: every node's listing was waited for, the silent one until its 5 s bound.
      expect(ms).toBeLessThan(4500);
      await s.m.callOk("kill_session", { session_id: id });
    } finally {
      gw.cleanup();
    }
  }, 120_000);

  it("its bad rows are left out and said, the others listed; a bad result fails only that call; nothing bad becomes a route or a resource", async () => {
    const s = world({
      rows: [
        row("hn-good"),
        row("../.."),
        row("hn-status", { status: "sleeping" }),
        row("hn-extra", { evil: true }),
        { session_id: "hn-half" },
        row("__proto__"),
      ],
      results: { stream_output: { nonsense: true }, start_session: { ...row("../.."), status: "starting" } },
    });
    s.m = await connect(s.w);
    const m = s.m;
    const l = await until(
      async () => {
        const r = await m.callOk("list_sessions", { status_filter: "all" });
        return r.sessions.length ? r : undefined;
      },
      20_000,
      200,
    );
    // "__proto__" is a session id like any other here (every map of sessions has no prototype).
    expect(l.sessions.map((r) => r.session_id).sort()).toEqual(["__proto__", "hn-extra", "hn-good"]);
    // A field this server does not know is not passed on.
    expect(l.sessions.find((r) => r.session_id === "hn-extra")).not.toHaveProperty("evil");
    expect(l.total_count).toBe(3);
    expect(l.nodes).toEqual([
      expect.objectContaining({
        name: "bad",
        status: "reachable",
        sessions: 3,
        error: expect.stringMatching(
          /^3 of its rows were not valid and are left out \(session_id "\.\.\/\.\." is not a session id\)$/,
        ),
      }),
    ]);
    const uris = (await m.client.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain("session://hn-good");
    expect(uris.filter((u) => u.includes(".."))).toEqual([]);
    // A result that is not the tool's: that call fails, typed, naming the node.
    const bad = await m.call("stream_output", { session_id: "hn-good" });
    expect(bad.error?.code).toBe("INTERNAL");
    expect(bad.error?.message).toContain("node bad answered stream_output with a result that is not one");
    const started = await m.call("start_session", { cwd: "/srv", node: "bad" });
    expect(started.error?.message).toContain('session_id "../.." is not a session id');
    expect((await m.client.listResources()).resources.map((r) => r.uri).filter((u) => u.includes(".."))).toEqual([]);
    expect((await m.callOk("list_sessions", {})).sessions.map((r) => r.session_id).sort()).toEqual([
      "__proto__",
      "hn-extra",
      "hn-good",
    ]);
  }, 120_000);

  it("a flood of notices reaches the client rate-limited; a notice not in this server's shape never does", async () => {
    const s = world({
      rows: [row("hn-f")],
      flood: {
        tool: "send_message",
        count: 20_000,
        data: { event: "turn_ended", session_id: "hn-f", status: "idle" },
        bad: [
          { event: "turn_ended", session_id: "../..", status: "idle" },
          { event: "turn_ended", session_id: "hn-f", status: "sleeping" },
          {
            event: "permission",
            session_id: "hn-f",
            status: "waiting_for_permission",
            tool_name: "Bash",
            tool_input: { command: "x".repeat(70_000) },
          },
          "a string",
          { event: "turn_ended", session_id: "hn-f", status: "idle", evil: "\u001b]52;c;cGF5bG9hZA==\u0007" },
        ],
      },
    });
    s.m = await connect(s.w);
    const got: Array<Record<string, unknown>> = [];
    s.m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void got.push(n.params.data as Record<string, unknown>),
    );
    await until(async () => (await s.m!.callOk("list_sessions", {})).sessions.length === 1, 20_000, 200);
    const t0 = Date.now();
    const r = await s.m.call(
      "send_message",
      { session_id: "hn-f", message: "go", wait_for_response: false },
      { timeout: 120_000 },
    );
    expect(r.error?.code).toBe("SESSION_NOT_FOUND");
    // Quiet for 2 s (time passing is the point: nothing more arrives), then counted.
    let seen = -1;
    await until(
      async () => {
        const n = got.length;
        const quiet = n === seen;
        seen = n;
        return quiet;
      },
      120_000,
      2000,
    );
    const secs = (Date.now() - t0) / 1000;
    const fromNode = got.filter((d) => d.node === "bad");
    // The burst (100) and 20 a second after it, of 20 005 sent.
    expect(fromNode.length).toBeGreaterThanOrEqual(100);
    expect(fromNode.length).toBeLessThanOrEqual(100 + 20 * secs + 5);
    // Only notices in this server's shape pass, with its fields only.
    expect(fromNode.every((d) => d.session_id === "hn-f" && d.status === "idle" && d.evil === undefined)).toBe(true);
    expect(fromNode.some((d) => d.event === "permission")).toBe(false);
    await until(() => /node bad: \d+ notices dropped \(more than 20 a second\)/.test(s.m!.stderr()), 20_000);
    expect((await s.m.callOk("list_sessions", {})).sessions.map((x) => x.session_id)).toEqual(["hn-f"]);
  }, 180_000);

  it("auto does not take a node's capacity on its word: its live sessions as seen here, its slots capped", async () => {
    // It says 5 free slots, but lists 5 live sessions: none free. This machine has 2.
    const full = world(
      { health: { live: 0, max: 5, mem: 999_999_999 }, rows: [1, 2, 3, 4, 5].map((i) => row(`hn-l${i}`)) },
      { env: { MAX_CONCURRENT_SESSIONS: "2" } },
    );
    full.m = await connect(full.w);
    await until(async () => (await full.m!.callOk("list_sessions", {})).sessions.length === 5, 20_000, 200);
    const a = await full.m.callOk("start_session", { cwd: full.w.work, node: "auto" });
    expect(a.node).toBeUndefined();
    // It says a million free slots and a petabyte: it counts as 100 slots; this machine has 150.
    const big = world(
      { health: { live: 0, max: 1_000_000, mem: 999_999_999_999 }, rows: [] },
      { env: { MAX_CONCURRENT_SESSIONS: "150" } },
    );
    big.m = await connect(big.w);
    await until(async () => (await big.m!.callOk("list_sessions", {})).nodes?.[0]?.status === "reachable", 20_000, 200);
    const b = await big.m.callOk("start_session", { cwd: big.w.work, node: "auto" });
    expect(b.node).toBeUndefined();
  }, 120_000);

  it("its command runs with what ssh needs of the environment, never this server's secrets", async () => {
    const s = world(
      {},
      {
        env: {
          DOPPLER_TOKEN: "dp.st.secret-x",
          ANTHROPIC_API_KEY: "sk-ant-secret-x",
          CLAUDE_SESSIONS_TOKEN: "http-token-secret-x",
          AWS_SECRET_ACCESS_KEY: "aws-x",
          SSH_AUTH_SOCK: "/tmp/agent.sock",
          KUBECONFIG: "/tmp/kube",
          LC_ALL: "C.UTF-8",
        },
      },
    );
    const out = join(s.w.root, "node-env.json");
    writeFileSync(s.cfg, JSON.stringify({ envOut: out }));
    s.m = await connect(s.w);
    const names = await until(() => (existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as string[]) : undefined), 20_000);
    expect(names).toEqual(expect.arrayContaining(["PATH", "HOME", "LANG", "LC_ALL", "SSH_AUTH_SOCK", "KUBECONFIG"]));
    for (const secret of [
      "DOPPLER_TOKEN",
      "ANTHROPIC_API_KEY",
      "CLAUDE_SESSIONS_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "CLAUDE_SESSIONS_DIR",
      "CLAUDE_SESSIONS_NODES",
    ])
      expect(names, secret).not.toContain(secret);
  }, 60_000);

  it('an ssh attach prefix without "--" is refused when nodes.json is read', () => {
    const s = world({}, { attach: ["ssh", "-t", "host"] });
    const serve = spawnSync(process.execPath, [CLI, "serve"], { env: s.w.env, encoding: "utf8", input: "", timeout: 30_000 });
    expect(serve.status).toBe(1);
    expect(serve.stderr).toContain('an ssh "attach" prefix ends with "--"');
  });
});

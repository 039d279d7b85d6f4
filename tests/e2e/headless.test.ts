/**
 * Headless sessions over MCP (backend "headless": the real CLI through the Agent SDK, no terminal), offline
 * against the mock API: the same tools as on tmux/pty, the SDK's per-turn figures, headless-only options,
 * run_task, and take-over to tmux and back. See tests/helpers/real-claude.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failedTurn, until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, realClaudeVersion, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();
const H = { backend: "headless", permission_mode: "default" } as const;

describe.runIf(run)("real claude, headless backend over MCP", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({
      dirs: [
        "par-0",
        "par-1",
        "par-2",
        "bytes",
        "perm",
        "esc",
        "fail",
        "limits",
        "budget",
        "schema",
        "resume",
        "takeover",
        "task",
        "task2",
        "refuse",
        "crash",
        "queue",
        "restart",
        "pool",
        "mcp",
      ],
      untrusted: ["hooked"],
    });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  async function start(dir: string, extra: Record<string, unknown> = {}): Promise<string> {
    const s = await m.call("start_session", { cwd: e.dir(dir), ...H, ...extra });
    expect(s.ok, s.text).toBe(true);
    expect(s.data).toMatchObject({ backend: "headless", status: "ready" });
    expect(s.data.attach_command).toBeUndefined();
    return s.data.session_id as string;
  }

  it("a folder Claude Code does not trust: STARTUP_BLOCKED and its SessionStart hook never ran (start and run_task); trust_workspace: true is the way out", async () => {
    const cwd = e.dir("hooked");
    const ran = join(cwd, "hook-ran");
    mkdirSync(join(cwd, ".claude"), { recursive: true });
    writeFileSync(
      join(cwd, ".claude", "settings.json"),
      JSON.stringify({ hooks: { SessionStart: [{ matcher: "*", hooks: [{ type: "command", command: `touch ${ran}` }] }] } }),
    );
    for (const [tool, extra] of [
      ["start_session", H],
      ["run_task", { prompt: "hi" }],
    ] as const) {
      const r = await m.call(tool, { cwd, ...extra });
      expect(r.error?.code, r.text).toBe("STARTUP_BLOCKED");
      expect(r.error?.suggestion).toContain("trust_workspace: true");
    }
    expect(existsSync(ran)).toBe(false);
    const ok = await m.call("start_session", { cwd, ...H, trust_workspace: true });
    expect(ok.ok, ok.text).toBe(true);
    // The folder's own hook ran, as it does once the terminal's trust screen is answered Yes.
    await until(() => existsSync(ran), 10_000, 100);
    await m.callOk("kill_session", { session_id: ok.data.session_id as string });
  });

  it("a stdio MCP server starts only when the operator lists its command (CLAUDE_SESSIONS_MCP_COMMANDS); then it really runs", async () => {
    const cwd = e.dir("mcp");
    const started = join(e.world.root, "mcp-server-started");
    const server = join(e.world.root, "mcp-probe.sh");
    writeFileSync(server, `#!/bin/sh\n: > '${started}'\nexit 0\n`, { mode: 0o755 });
    const mcp_servers = { probe: { command: server } };
    const refused = await m.call("start_session", { cwd, ...H, mcp_servers });
    expect(refused.error?.code).toBe("PERMISSION_DENIED");
    expect(existsSync(started)).toBe(false);
    const listed = await e.connect({ CLAUDE_SESSIONS_MCP_COMMANDS: server });
    try {
      const s = await listed.call("start_session", { cwd, ...H, mcp_servers });
      if (realClaudeVersion() === "2.1.197") {
        // 2.1.197 takes no mcp_servers over stdin at all (the SDK's initialize delivery): refused before anything
        // starts, naming the terminals that honour it on that version.
        expect(s.error?.code, s.text).toBe("UNSUPPORTED_OPTION");
        expect(s.error?.message).toMatch(
          /mcp_servers needs Claude Code 2\.1\.330 or later on headless \(this CLI is 2\.1\.197\)/,
        );
        expect(s.error?.suggestion).toMatch(/backend: "tmux" or "pty"/);
        expect(existsSync(started)).toBe(false);
        return;
      }
      expect(s.ok, s.text).toBe(true);
      await until(() => existsSync(started), 10_000, 100);
      await listed.callOk("kill_session", { session_id: s.data.session_id as string });
    } finally {
      await listed.close();
    }
  });

  it("parallel starts and turns: each its own session, reply, usage and cost from the SDK; list and log work, screen is refused", async () => {
    const ids = await Promise.all([0, 1, 2].map((i) => start(`par-${i}`)));
    expect(new Set(ids).size).toBe(3);
    const rs = await Promise.all(
      ids.map((id, i) =>
        m.call("send_message", { session_id: id, message: `parallel ${i}`, timeout_ms: 30_000, wait_for_usage: true }),
      ),
    );
    rs.forEach((r, i) => {
      expect(r.data, r.text).toMatchObject({
        completed: true,
        final_state: "idle",
        turn_outcome: "completed",
        response: `MOCK REPLY: parallel ${i}`,
        num_turns: 1,
        stop_reason: "end_turn",
      });
      expect(r.data.usage).toEqual(e.requestsWith(`parallel ${i}`)[0]?.reply?.usage ?? expect.anything());
      expect(r.data.cost_usd).toBeGreaterThan(0);
      expect(r.data.duration_ms).toBeGreaterThan(0);
      expect(Object.keys(r.data.model_usage as object)).toHaveLength(1);
    });
    const w = await m.call("wait_for_completion", { session_id: ids[0], timeout_ms: 1000 });
    expect(w.data).toMatchObject({ completed: true, last_response: "MOCK REPLY: parallel 0", num_turns: 1 });
    const listed = await m.call("list_sessions", {});
    for (const id of ids)
      expect(listed.data.sessions.find((x) => x.session_id === id)).toMatchObject({
        backend: "headless",
        status: "idle",
        survives_restart: false,
      });
    const log = await m.call("stream_output", { session_id: ids[0], mode: "log" });
    expect(log.data.text).toContain("MOCK REPLY: parallel 0");
    const tr = await m.call("stream_output", { session_id: ids[0], mode: "transcript" });
    expect(JSON.stringify(tr.data.items)).toContain("parallel 0");
    const screen = await m.call("stream_output", { session_id: ids[0], mode: "screen" });
    expect(screen.ok).toBe(false);
    expect(screen.error?.code).toBe("INVALID_ARGUMENT");
    expect(screen.text).toMatch(/log|transcript/);
    const bash = await m.call("send_message", { session_id: ids[1], message: "ls", bash_mode: true });
    expect(bash.ok).toBe(false);
    for (const id of ids) expect((await m.call("kill_session", { session_id: id })).data).toMatchObject({ status: "killed" });
  });

  it("prompts arrive byte-exact at the API (quotes, $(), backticks, unicode, tabs, newlines, 20,000 characters)", async () => {
    const id = await start("bytes");
    const prompts = [
      `it's "quoted" $(rm -rf /) \`whoami\` ; | & > <`,
      "tab\there\nline two\n\nline four",
      "ünïcödé 🚀 \\ back\\slash",
      "x".repeat(20_000),
      " #not memory",
      " !not bash",
    ];
    for (const p of prompts) {
      const r = await m.call("send_message", { session_id: id, message: p, timeout_ms: 30_000 });
      expect(r.data, r.text).toMatchObject({ completed: true });
      expect(e.requestsWith(p), JSON.stringify(p.slice(0, 40))).toHaveLength(1);
      expect(r.data.response).toBe(`MOCK REPLY: ${p}`);
    }
    await m.call("kill_session", { session_id: id });
  });

  it("permissions through respond_permission: allow, deny with a message Claude sees, edited input", async () => {
    const cwd = e.dir("perm");
    const id = await start("perm");
    const ask = async (file: string, body: string) => {
      const r = await m.call("send_message", { session_id: id, message: `MOCK_WRITE:${file}:${body}`, timeout_ms: 20_000 });
      expect(r.data, r.text).toMatchObject({
        completed: false,
        final_state: "waiting_for_permission",
        pending_permission: { tool_name: "Write" },
      });
    };
    const a = join(cwd, "allowed.txt");
    await ask(a, "hello");
    expect((await m.call("respond_permission", { session_id: id, decision: "allow" })).data).toMatchObject({
      answered: true,
      tool_name: "Write",
    });
    expect((await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 })).data).toMatchObject({
      completed: true,
      final_state: "idle",
    });
    expect(readFileSync(a, "utf8")).toBe("hello");

    const d = join(cwd, "denied.txt");
    await ask(d, "nope");
    const from = e.mock.mainRequests().length;
    expect(
      (await m.call("respond_permission", { session_id: id, decision: "deny", message: "not in this folder, please" })).data,
    ).toMatchObject({ answered: true });
    const dw = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(dw.data).toMatchObject({ completed: true });
    expect(existsSync(d)).toBe(false);
    const sent = e.mock.mainRequests().slice(from);
    expect(JSON.stringify(sent.map((q) => q.toolResult))).toContain("not in this folder, please");

    const ed = join(cwd, "edited.txt");
    await ask(ed, "original");
    const resp = await m.call("respond_permission", {
      session_id: id,
      decision: "allow",
      updated_input: { file_path: ed, content: "edited by the caller" },
    });
    expect(resp.ok, resp.text).toBe(true);
    expect((await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 })).data).toMatchObject({ completed: true });
    expect(readFileSync(ed, "utf8")).toBe("edited by the caller");
    await m.call("kill_session", { session_id: id });
  });

  it("interrupt_session stops a slow turn at once; the session goes on", async () => {
    const id = await start("esc");
    const sent = await m.call("send_message", { session_id: id, message: "MOCK_SLOW:30 slow", wait_for_response: false });
    expect(sent.ok, sent.text).toBe(true);
    await e.mock.waitForRequest((q) => q.lastUserText === "MOCK_SLOW:30 slow", 20_000);
    const t0 = Date.now();
    const i = await m.call("interrupt_session", { session_id: id });
    expect(i.data, i.text).toMatchObject({ interrupted: true, status: "idle" });
    expect(Date.now() - t0).toBeLessThan(5000);
    const w = await m.call("wait_for_completion", { session_id: id, timeout_ms: 5000 });
    expect(w.data).toMatchObject({ completed: true, turn_outcome: "interrupted", error_subtype: "error_during_execution" });
    expect((await m.call("send_message", { session_id: id, message: "after" })).data).toMatchObject({
      response: "MOCK REPLY: after",
    });
    await m.call("kill_session", { session_id: id });
  });

  it("an API error: final_state error with error_subtype api_error", async () => {
    const id = await start("fail");
    const r = failedTurn(await m.call("send_message", { session_id: id, message: "MOCK_ERROR:400", timeout_ms: 30_000 }));
    expect(r).toMatchObject({ final_state: "error", turn_outcome: "failed", error_subtype: "api_error" });
    expect(String(r.error)).toContain("400");
    await m.call("kill_session", { session_id: id });
  });

  it("max_turns is the CLI's agentic limit and max_budget_usd stops a turn (error_subtype), the session goes on", async () => {
    const id = await start("limits", { max_turns: 1 });
    const r = failedTurn(await m.call("send_message", { session_id: id, message: "MOCK_BASH:echo one", timeout_ms: 30_000 }));
    expect(r).toMatchObject({ final_state: "error", turn_outcome: "failed", error_subtype: "error_max_turns" });
    // Not the server's prompt count: a second prompt is taken.
    expect((await m.call("send_message", { session_id: id, message: "plain" })).data).toMatchObject({
      response: "MOCK REPLY: plain",
    });
    await m.call("kill_session", { session_id: id });

    const b = await start("budget", { max_budget_usd: 0.001 });
    const rb = failedTurn(await m.call("send_message", { session_id: b, message: "spend something", timeout_ms: 30_000 }));
    expect(rb).toMatchObject({ final_state: "error", error_subtype: "error_max_budget_usd" });
    expect(rb.cost_usd).toBeGreaterThan(0.001);
    await m.call("kill_session", { session_id: b });
  });

  it("output_schema gives structured_output", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const id = await start("schema", { output_schema: schema });
    e.mock.setNextReply((req) => {
      const tools: Array<{ name: string }> = Array.isArray(req.body?.tools) ? req.body.tools : [];
      const tool = tools.find((x) => /structured/i.test(x.name));
      return tool ? { blocks: [{ type: "tool_use", name: tool.name, input: { answer: "forty-two" } }] } : undefined;
    });
    const r = await m.call("send_message", { session_id: id, message: "answer in the schema", timeout_ms: 30_000 });
    expect(r.data, r.text).toMatchObject({ completed: true, structured_output: { answer: "forty-two" } });
    await m.call("kill_session", { session_id: id });
  });

  it("headless-only options are refused on tmux, and doppler on headless, naming the backend that can", async () => {
    const t = await m.call("start_session", {
      cwd: e.dir("refuse"),
      backend: "tmux",
      output_schema: { type: "object" },
      betas: ["context-1m-2025-08-07"],
    });
    expect(t.ok).toBe(false);
    expect(t.error?.code).toBe("UNSUPPORTED_OPTION");
    expect(t.text).toMatch(/output_schema, betas are honoured by the headless backend only/);
    const d = await m.call("start_session", { cwd: e.dir("refuse"), backend: "headless", doppler: { project: "p" } });
    expect(d.ok).toBe(false);
    expect(d.error?.code).toBe("UNSUPPORTED_OPTION");
    expect(d.text).toMatch(/tmux and pty/);
  });

  it("resume keeps the Claude session id and the history; fork branches it", async () => {
    const id = await start("resume");
    const s0 = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === id)!;
    await m.callOk("send_message", { session_id: id, message: "remember the word apricot" });
    await m.callOk("kill_session", { session_id: id });
    const r = await m.call("resume_session", { session_id: id, backend: "headless" });
    expect(r.data, r.text).toMatchObject({
      backend: "headless",
      status: "ready",
      forked: false,
      claude_session_id: s0.claude_session_id,
    });
    await m.callOk("send_message", { session_id: id, message: "what was the word?" });
    const req = e.requestsWith("what was the word?")[0]!;
    expect(e.userTexts(req)).toContain("remember the word apricot");
    await m.callOk("kill_session", { session_id: id });
    const f = await m.call("resume_session", { session_id: id, fork: true });
    expect(f.data, f.text).toMatchObject({ backend: "headless", forked: true, forked_from: id });
    expect(f.data.claude_session_id).not.toBe(s0.claude_session_id);
    // A fork is a new session; the parent's record stays as it was.
    expect(f.data.session_id).not.toBe(id);
    await m.callOk("send_message", { session_id: f.data.session_id as string, message: "forked: the word?" });
    expect(e.userTexts(e.requestsWith("forked: the word?")[0]!)).toContain("remember the word apricot");
    const rows = (await m.callOk("list_sessions", {})).sessions;
    expect(rows.find((x) => x.session_id === id)).toMatchObject({ status: "dead", claude_session_id: s0.claude_session_id });
    await m.callOk("kill_session", { session_id: f.data.session_id as string });
  });

  it("take-over: a headless conversation resumed in tmux (same Claude session id, attachable), then back to headless", async () => {
    const id = await start("takeover", { max_budget_usd: 5 });
    const cs = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === id)!.claude_session_id;
    await m.callOk("send_message", { session_id: id, message: "headless says pear" });
    await m.callOk("kill_session", { session_id: id });
    const t = await m.call("resume_session", { session_id: id, backend: "tmux" });
    expect(t.data, t.text).toMatchObject({ backend: "tmux", status: "ready", claude_session_id: cs });
    expect(String(t.data.attach_command)).toContain("tmux");
    const r = await m.callOk("send_message", { session_id: id, message: "tmux asks the fruit", timeout_ms: 30_000 });
    expect(r.response).toBe("MOCK REPLY: tmux asks the fruit");
    expect(e.userTexts(e.requestsWith("tmux asks the fruit")[0]!)).toContain("headless says pear");
    await m.callOk("kill_session", { session_id: id });
    const back = await m.call("resume_session", { session_id: id, backend: "headless" });
    expect(back.data, back.text).toMatchObject({ backend: "headless", status: "ready", claude_session_id: cs });
    const r2 = await m.callOk("send_message", { session_id: id, message: "headless again", wait_for_usage: true });
    expect(r2).toMatchObject({ response: "MOCK REPLY: headless again", num_turns: 1 });
    expect(e.userTexts(e.requestsWith("headless again")[0]!)).toEqual(
      expect.arrayContaining(["headless says pear", "tmux asks the fruit"]),
    );
    await m.callOk("kill_session", { session_id: id });
  });

  it("run_task: the first turn's result and the ids to go on with; keep_session false ends it (resumable); progress is reported", async () => {
    const progress: unknown[] = [];
    const r = await m.call(
      "run_task",
      { cwd: e.dir("task"), prompt: "do the task", permission_mode: "default", wait_for_usage: true },
      { onprogress: (p) => progress.push(p) },
    );
    expect(r.data, r.text).toMatchObject({
      backend: "headless",
      kept: true,
      completed: true,
      final_state: "idle",
      response: "MOCK REPLY: do the task",
      num_turns: 1,
    });
    expect(r.data.cost_usd).toBeGreaterThan(0);
    expect(progress.length).toBeGreaterThan(0);
    const id = r.data.session_id as string;
    expect((await m.callOk("send_message", { session_id: id, message: "and then?" })).response).toBe("MOCK REPLY: and then?");
    await m.callOk("kill_session", { session_id: id });

    const once = await m.call("run_task", { cwd: e.dir("task2"), prompt: "one shot", keep_session: false });
    expect(once.data, once.text).toMatchObject({ kept: false, response: "MOCK REPLY: one shot" });
    // Ended in the background once the reply is in hand.
    await until(
      async () =>
        (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === once.data.session_id)?.status === "dead",
      15_000,
      100,
    );
    const back = await m.call("resume_session", { session_id: once.data.session_id, message: "more" });
    expect(back.data, back.text).toMatchObject({ backend: "headless", claude_session_id: once.data.claude_session_id });
    await m.callOk("kill_session", { session_id: once.data.session_id as string });
  });

  it("run_task: cancelling the call ends the turn", async () => {
    const ac = new AbortController();
    const p = m.call("run_task", { cwd: e.dir("task2"), prompt: "MOCK_SLOW:30 cancel me" }, { signal: ac.signal });
    await e.mock.waitForRequest((q) => q.lastUserText === "MOCK_SLOW:30 cancel me", 30_000);
    ac.abort();
    await p.catch(() => undefined);
    const listed = await m.callOk("list_sessions", {});
    const s = listed.sessions.filter((x) => x.backend === "headless" && String(x.cwd).endsWith("task2")).at(-1)!;
    const w = await m.call("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    expect(w.data, w.text).toMatchObject({ completed: true, turn_outcome: "interrupted" });
    await m.callOk("kill_session", { session_id: s.session_id as string });
  });

  it("queue: true hands a prompt to a busy session; it runs as its own turn with its own figures", async () => {
    const id = await start("queue");
    await m.callOk("send_message", { session_id: id, message: "MOCK_SLOW:1.5 first", wait_for_response: false });
    const busy = await m.call("send_message", { session_id: id, message: "refused while busy", wait_for_response: false });
    expect(busy.error?.code).toBe("SESSION_BUSY");
    const q = await m.call("send_message", {
      session_id: id,
      message: "second, queued",
      queue: true,
      timeout_ms: 30_000,
      wait_for_usage: true,
    });
    expect(q.data, q.text).toMatchObject({ queued: true, completed: true, response: "MOCK REPLY: second, queued", num_turns: 1 });
    expect(e.requestsWith("second, queued")).toHaveLength(1);
    await m.callOk("kill_session", { session_id: id });
  });

  it("a crash mid-turn wakes the waiter at once with final_state dead; the session is resumable", async () => {
    const id = await start("crash");
    const pid = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === id)!.pid as number;
    // A conversation the CLI has written to its transcript (a process killed in its very first turn leaves none to resume).
    await m.callOk("send_message", { session_id: id, message: "a first turn" });
    await m.callOk("send_message", { session_id: id, message: "MOCK_SLOW:30 crash me", wait_for_response: false });
    await e.mock.waitForRequest((q) => q.lastUserText === "MOCK_SLOW:30 crash me", 20_000);
    const w = m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    process.kill(-pid, "SIGKILL");
    const t0 = Date.now();
    expect(failedTurn(await w, "SESSION_DEAD")).toMatchObject({ completed: false, final_state: "dead" });
    expect(Date.now() - t0).toBeLessThan(3000);
    const r = await m.call("resume_session", { session_id: id });
    expect(r.data, r.text).toMatchObject({ backend: "headless", status: "ready" });
    await m.callOk("kill_session", { session_id: id });
  });

  it("a headless session lives as long as its server: after the server is killed it is recorded hibernated (it had a conversation), and resumable", async () => {
    const m2 = await e.connect();
    const s = await m2.callOk("start_session", { cwd: e.dir("restart"), ...H });
    await m2.callOk("send_message", { session_id: s.session_id, message: "before the restart" });
    process.kill(m2.pid!, "SIGKILL");
    await m2.close().catch(() => undefined);
    // stdin EOF: the CLI ends on its own shortly after its server.
    await until(() => !existsSync(`/proc/${s.pid}`), 15_000, 100);
    const m3 = await e.connect();
    try {
      const listed = await m3.callOk("list_sessions", {});
      expect(listed.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({
        status: "hibernated",
        backend: "headless",
      });
      const r = await m3.call("resume_session", { session_id: s.session_id, message: "after the restart" });
      expect(r.data, r.text).toMatchObject({ backend: "headless", claude_session_id: s.claude_session_id });
      expect(await m3.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 20_000 })).toMatchObject({
        completed: true,
        last_response: "MOCK REPLY: after the restart",
      });
      expect(e.userTexts(e.requestsWith("after the restart")[0]!)).toContain("before the restart");
      await m3.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m3.close();
    }
  });

  it("warm pool (CLAUDE_SESSIONS_WARM_POOL=1): after a run_task a spare session waits ready, visible in list_sessions; the next run_task like it takes it", async () => {
    const mp = await e.connect({ CLAUDE_SESSIONS_WARM_POOL: "1" });
    try {
      const args = { cwd: e.dir("pool"), permission_mode: "default" as const, keep_session: false };
      const first = await mp.callOk("run_task", { ...args, prompt: "pool one" });
      expect(first).toMatchObject({ response: "MOCK REPLY: pool one", kept: false });
      // Not the first task's own session: it is ready too for the moment before its background kill ends it.
      const spare = await until(
        async () =>
          (await mp.callOk("list_sessions", {})).sessions.find(
            (x) =>
              x.session_id !== first.session_id &&
              x.backend === "headless" &&
              x.status === "ready" &&
              String(x.cwd).endsWith(String(args.cwd).split("/").pop()!),
          ),
        30_000,
        200,
      );
      const second = await mp.callOk("run_task", { ...args, prompt: "pool two" });
      expect(second).toMatchObject({ session_id: spare!.session_id, response: "MOCK REPLY: pool two" });
      // A call with other options does not take it.
      const other = await mp.callOk("run_task", { ...args, prompt: "pool three", model: "claude-sonnet-4-5" });
      expect(other.session_id).not.toBe(spare!.session_id);
    } finally {
      await mp.close();
    }
  });
});

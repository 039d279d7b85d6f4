/**
 * The spine through a real MCP client → the built server → real tmux (private socket), a pty, or the Agent SDK
 * (headless) → the fake claude.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { can, connect, contractKinds, makeWorld, processesIn, until, type Mcp, type World } from "../helpers/harness.js";

const BACKENDS = await contractKinds();

describe.each(BACKENDS)("session lifecycle over MCP (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  /** The sessions a failed attempt of the first test left: its retry removes them first, as its counts are the world's. */
  let leftover: string[] = [];
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("lists its tools with input and output schemas and honest annotations", async () => {
    const { tools } = await m.client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of [
      "start_session",
      "resume_session",
      "kill_session",
      "list_sessions",
      "send_message",
      "wait_for_completion",
      "stream_output",
    ]) {
      expect(byName[name], name).toBeDefined();
      expect(byName[name]!.inputSchema.type).toBe("object");
      expect(byName[name]!.outputSchema?.type).toBe("object");
    }
    expect(byName.list_sessions!.annotations?.readOnlyHint).toBe(true);
    // It may record an interrupt a person made with Esc and clear the input box: not read-only (an absent
    // readOnlyHint is false for the MCP spec and for Claude Code alike).
    expect(byName.wait_for_completion!.annotations?.readOnlyHint ?? false).toBe(false);
    expect(byName.stream_output!.annotations?.readOnlyHint).toBe(true);
    expect(byName.kill_session!.annotations?.destructiveHint).toBe(true);
    expect(byName.start_session!.inputSchema.required).toEqual(["cwd"]);
  });

  it("starts three sessions in parallel; each answers its own prompt; stream, list and kill work on each", async () => {
    for (const id of leftover) await m.call("kill_session", { session_id: id, save_state: false });
    const dirs = ["p1", "p2", "p3"].map((n) => w.dir(n));
    const started = await Promise.all(dirs.map((cwd) => m.call("start_session", { cwd })));
    leftover = started.filter((s) => s.ok).map((s) => s.data.session_id as string);
    for (const s of started) expect(s.ok, s.text).toBe(true);
    const ids = started.map((s) => s.data.session_id as string);
    expect(new Set(ids).size).toBe(3);
    for (const s of started) {
      expect(s.data.status).toBe("ready");
      expect(s.data.backend).toBe(backend);
      expect(s.data.claude_session_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(processesIn(w.dir(dirs[started.indexOf(s)]!.split("/").pop()!)).length).toBeGreaterThan(0);
      if (backend === "tmux") expect(s.data.attach_command).toContain(`attach -t =cs-${s.data.session_id}`);
    }
    if (backend === "tmux") {
      // Each is a real tmux session on the private socket, named cs-<id>.
      const names = w.tmux(["list-sessions", "-F", "#{session_name}"]).trim().split("\n").sort();
      expect(names).toEqual(ids.map((id) => `cs-${id}`).sort());
    }

    const replies = await Promise.all(
      ids.map((id, i) => m.call("send_message", { session_id: id, message: `task ${i}: say hi` })),
    );
    replies.forEach((r, i) => {
      expect(r.ok, r.text).toBe(true);
      expect(r.data.message_sent).toBe(true);
      expect(r.data.completed).toBe(true);
      expect(r.data.final_state).toBe("idle");
      expect(r.data.response).toBe(`FAKE REPLY: task ${i}: say hi`);
    });

    for (const [i, id] of ids.entries()) {
      // send_message returns at the Stop hook; the reply may be drawn a moment later.
      const screen = await until(async () => {
        const x = await m.call("stream_output", { session_id: id, mode: "screen" });
        return !can(backend, "screen") || (x.ok && x.data.text?.includes(`FAKE REPLY: task ${i}: say hi`)) ? x : undefined;
      }, 5000);
      if (can(backend, "screen")) expect(screen.data.text).toContain(`FAKE REPLY: task ${i}: say hi`);
      else expect(screen.error?.code).toBe("INVALID_ARGUMENT");
      const tr = await m.call("stream_output", { session_id: id, mode: "transcript" });
      await until(async () => {
        const t = await m.call("stream_output", { session_id: id, mode: "transcript" });
        return t.data.items!.some((x) => x.role === "assistant");
      });
      expect(tr.data.items![0]).toMatchObject({ role: "user", text: `task ${i}: say hi` });
      const log = await m.call("stream_output", { session_id: id, mode: "log" });
      expect(log.data.text).toContain(`task ${i}`);
      expect(log.data.text).not.toMatch(/\x1b\[/);
    }

    const list = await m.call("list_sessions", {});
    expect(list.data.total_count).toBe(3);
    for (const s of list.data.sessions) {
      expect(s.status).toBe("idle");
      expect(s.turn_count).toBe(1);
      expect(s.backend).toBe(backend);
      expect(s.survives_restart).toBe(backend === "tmux");
    }

    const killed = await m.call("kill_session", { session_id: ids[0] });
    expect(killed.data).toMatchObject({ status: "killed", state_saved: true });
    // The session's processes are gone (a hook Claude started on its way out may take a moment to finish).
    await until(() => processesIn(dirs[0]!).length === 0, 5000);
    if (backend === "tmux") expect(() => w.tmux(["has-session", "-t", `=cs-${ids[0]}`])).toThrow();
    const again = await m.call("kill_session", { session_id: ids[0] });
    expect(again.data.status).toBe("already_dead");
    const gone = await m.call("kill_session", { session_id: "nosuchsession" });
    expect(gone.data.status).toBe("not_found");

    const active = await m.call("list_sessions", { status_filter: "active" });
    expect(active.data.sessions.map((s) => s.session_id).sort()).toEqual(ids.slice(1).sort());
    const inactive = await m.call("list_sessions", { status_filter: "inactive" });
    expect(inactive.data.sessions).toEqual([expect.objectContaining({ session_id: ids[0], status: "dead" })]);
    for (const id of ids.slice(1)) await m.call("kill_session", { session_id: id, save_state: false });
    const after = await m.call("list_sessions", {});
    expect(after.data.total_count).toBe(1);
    leftover = [];
  });

  it("stream_output with a cursor returns only what is new, and follow waits for it", async () => {
    const s = await m.call("start_session", { cwd: w.dir("stream") });
    const id = s.data.session_id as string;
    const first = await m.call("stream_output", { session_id: id, mode: "log" });
    const cursor = first.data.cursor;
    const follow = m.call("stream_output", { session_id: id, mode: "log", cursor, follow: true, timeout_ms: 10_000 });
    let settled = false;
    void follow.finally(() => (settled = true));
    // The server takes calls in order: once it answered a later one, the follow is in hand, and it is still waiting.
    await m.callOk("list_sessions", {});
    expect(settled).toBe(false);
    await m.call("send_message", { session_id: id, message: "FAKE_FLOOD:50 tell me more", wait_for_response: true });
    const got = await follow;
    expect(Number(got.data.cursor)).toBeGreaterThan(Number(cursor));
    const rest = await m.call("stream_output", { session_id: id, mode: "log", cursor: got.data.cursor });
    const all = got.data.text! + rest.data.text!;
    expect(all).toContain("flood line");
    // Nothing new: same cursor, empty text.
    const none = await m.call("stream_output", {
      session_id: id,
      mode: "log",
      cursor: (await m.call("stream_output", { session_id: id, mode: "log", cursor: rest.data.cursor })).data.cursor,
    });
    expect(none.data.text).toBe("");
    // Transcript cursors too.
    // Claude writes a turn's assistant line just after its Stop hook: wait for it before taking the cursor.
    const t1 = await until(async () => {
      const r = await m.call("stream_output", { session_id: id, mode: "transcript" });
      return r.data.items!.length === 2 ? r : undefined;
    });
    await m.call("send_message", { session_id: id, message: "second" });
    const t2 = await until(async () => {
      const r = await m.call("stream_output", { session_id: id, mode: "transcript", cursor: t1.data.cursor });
      return r.data.items!.length >= 2 ? r : undefined;
    });
    expect(t2.data.items!.map((i) => i.text)).toEqual(["second", "FAKE REPLY: second"]);
    await m.call("kill_session", { session_id: id });
  });

  it("wait_for_completion wakes on the Stop hook and reports progress while it waits", async () => {
    const s = await m.call("start_session", { cwd: w.dir("wait") });
    const id = s.data.session_id as string;
    const idle = await m.call("wait_for_completion", { session_id: id, timeout_ms: 1000 });
    expect(idle.data).toMatchObject({ completed: true, timed_out: false, final_state: "ready" });
    const sent = await m.call("send_message", { session_id: id, message: "FAKE_SLOW:2500 think", wait_for_response: false });
    expect(sent.data.message_sent).toBe(true);
    const busy = await m.call("send_message", { session_id: id, message: "too soon" });
    expect(busy.ok).toBe(false);
    expect(busy.error?.code).toBe("SESSION_BUSY");
    const progress: unknown[] = [];
    const done = await m.call(
      "wait_for_completion",
      { session_id: id, timeout_ms: 20_000 },
      { onprogress: (p) => progress.push(p) },
    );
    expect(done.data).toMatchObject({
      completed: true,
      timed_out: false,
      final_state: "idle",
      last_response: "FAKE REPLY: FAKE_SLOW:2500 think",
    });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    const short = await m.call("send_message", { session_id: id, message: "FAKE_SLOW:3000 again", timeout_ms: 300 });
    expect(short.data).toMatchObject({ message_sent: true, completed: false, timed_out: true, final_state: "busy" });
    await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    await m.call("kill_session", { session_id: id });
  });

  it("a cancelled wait stops at once and leaves the session and server as they were", async () => {
    const s = await m.call("start_session", { cwd: w.dir("cancel") });
    const id = s.data.session_id as string;
    await m.call("send_message", { session_id: id, message: "FAKE_SLOW:1500 busy", wait_for_response: false });
    const ac = new AbortController();
    const t0 = Date.now();
    const pending = m.call("wait_for_completion", { session_id: id, timeout_ms: 60_000 }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await expect(pending).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(2000);
    // The server got notifications/cancelled and ended its own waiter (not just the client giving up).
    await until(() => m.stderr().includes("wait_for_completion: CANCELLED"), 2000);
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data).toMatchObject({ completed: true, last_response: "FAKE REPLY: FAKE_SLOW:1500 busy" });
    await m.call("kill_session", { session_id: id, save_state: false });
  });

  it("keeps state.json private and in the spec's format", async () => {
    const file = join(w.stateDir, "state.json");
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(w.stateDir).mode & 0o777).toBe(0o700);
    const state = JSON.parse(readFileSync(file, "utf8"));
    expect(state.version).toBe("1.0.0");
    expect(typeof state.updated_at).toBe("string");
    const rec = Object.values(state.sessions)[0] as Record<string, unknown>;
    for (const k of [
      "session_id",
      "claude_session_id",
      "backend",
      "status",
      "created_at",
      "cwd",
      "command",
      "args",
      "turn_count",
      "error_log",
      "messages_sent",
      "responses_received",
      "total_chars_sent",
      "total_chars_received",
    ]) {
      expect(rec, k).toHaveProperty(k);
    }
    expect(existsSync(`${file}.bak`)).toBe(true);
  });
});

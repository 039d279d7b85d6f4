/**
 * Turn outcomes through the fake claude (a terminal, or stream-json under the Agent SDK): permission prompts, interrupts, API errors, crashes, queued prompts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { can, connect, contractKinds, failedTurn, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";

const BACKENDS = await contractKinds();

describe.each(BACKENDS)("turn outcomes (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    // The permission hook off: these sessions answer by the dialog's keys (the hook path: permission-hook.test.ts).
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend, CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: "0" });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("with the permission hook off, a prompt shows as waiting_for_permission with the tool; allow (by keys, or the SDK's canUseTool) runs it, deny does not", async () => {
    const cwd = w.dir("perm");
    const s = await m.call("start_session", { cwd });
    const id = s.data.session_id as string;
    const r = await m.call("send_message", { session_id: id, message: "FAKE_BASH:touch allowed.txt" });
    expect(r.data).toMatchObject({
      completed: false,
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash", tool_input: { command: "touch allowed.txt" } },
    });
    const listed = await m.call("list_sessions", {});
    expect(listed.data.sessions.find((y) => y.session_id === id)).toMatchObject({
      status: "waiting_for_permission",
      pending_permission: { tool_name: "Bash" },
    });
    const w1 = await m.call("wait_for_completion", { session_id: id, timeout_ms: 2000 });
    expect(w1.data).toMatchObject({
      completed: false,
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash" },
    });
    const busy = await m.call("send_message", { session_id: id, message: "hello" });
    expect(busy.error?.code).toBe("SESSION_BUSY");
    expect(busy.error?.suggestion).toContain("respond_permission");

    const a = await m.call("respond_permission", { session_id: id, decision: "allow" });
    expect(a.data).toMatchObject({ answered: true, decision: "allow", tool_name: "Bash" });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data).toMatchObject({ completed: true, final_state: "idle" });
    expect(existsSync(join(cwd, "allowed.txt"))).toBe(true);

    await m.call("send_message", { session_id: id, message: "FAKE_BASH:touch denied.txt" });
    const d = await m.call("respond_permission", { session_id: id, decision: "deny" });
    expect(d.data.answered).toBe(true);
    const done2 = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    // Like the real CLI, "No" in the dialog ends the turn as an interrupt (no Stop hook; the server confirms it on
    // screen); a headless deny is the tool's error and the turn goes on to its end.
    if (can(backend, "keys")) expect(done2.data).toMatchObject({ completed: true, turn_outcome: "interrupted" });
    else
      expect(done2.data).toMatchObject({
        completed: true,
        final_state: "idle",
        last_response: expect.stringContaining("FAKE: permission denied"),
      });
    expect(existsSync(join(cwd, "denied.txt"))).toBe(false);
    const none = await m.call("respond_permission", { session_id: id, decision: "allow" });
    expect(none.error?.code).toBe("SESSION_NOT_READY");
    await m.call("kill_session", { session_id: id });
  });

  it("interrupt_session ends a slow turn (no Stop hook fires) and the session stays usable", async () => {
    const s = await m.call("start_session", { cwd: w.dir("esc") });
    const id = s.data.session_id as string;
    await m.call("send_message", { session_id: id, message: "FAKE_SLOW:20000 long job", wait_for_response: false });
    const i = await m.call("interrupt_session", { session_id: id });
    expect(i.data).toMatchObject({ interrupted: true, status: "idle" });
    const w1 = await m.call("wait_for_completion", { session_id: id, timeout_ms: 1000 });
    expect(w1.data).toMatchObject({ completed: true, turn_outcome: "interrupted" });
    const r = await m.call("send_message", { session_id: id, message: "still there?" });
    expect(r.data.response).toBe("FAKE REPLY: still there?");
    await m.call("kill_session", { session_id: id });
  });

  it("an API error ends the turn with final_state error and the message; the next prompt works", async () => {
    const s = await m.call("start_session", { cwd: w.dir("fail") });
    const id = s.data.session_id as string;
    // A failed turn is a tool error (isError) whose details carry the whole result.
    const r = failedTurn(await m.call("send_message", { session_id: id, message: "FAKE_FAIL:500 overloaded" }));
    expect(r).toMatchObject({ completed: true, final_state: "error", turn_outcome: "failed", session_turns: 1 });
    expect(r.error).toContain("API Error: 500 overloaded");
    const ok = await m.call("send_message", { session_id: id, message: "again" });
    expect(ok.data).toMatchObject({ final_state: "idle", response: "FAKE REPLY: again" });
    await m.call("kill_session", { session_id: id });
  });

  it("a crash mid-turn wakes the waiter at once with final_state dead and the exit code", async () => {
    const s = await m.call("start_session", { cwd: w.dir("crash") });
    const id = s.data.session_id as string;
    const t0 = Date.now();
    const r = failedTurn(
      await m.call("send_message", { session_id: id, message: "FAKE_CRASH now", timeout_ms: 20_000 }),
      "SESSION_DEAD",
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ completed: false, timed_out: false, final_state: "dead" });
    // The exit status can reach tmux a moment after the pane died.
    const l = await until(async () => {
      const x = await m.call("list_sessions", { include_metadata: true });
      return x.data.sessions.find((y) => y.session_id === id)?.exit_code !== undefined ? x : undefined;
    }, 5000);
    expect(l.data.sessions.find((y) => y.session_id === id)).toMatchObject({ status: "dead", exit_code: 3 });
    const k = await m.call("kill_session", { session_id: id });
    expect(k.data.status).toBe("already_dead");
  });

  it("queue: true types into a busy session; the queued prompt runs as its own turn", async () => {
    const s = await m.call("start_session", { cwd: w.dir("queue") });
    const id = s.data.session_id as string;
    // The first turn outlasts the gap between the two calls however loaded the machine (800 ms did not, at load 20).
    await m.call("send_message", { session_id: id, message: "FAKE_SLOW:6000 first", wait_for_response: false });
    const q = await m.call("send_message", { session_id: id, message: "second", queue: true, timeout_ms: 30_000 });
    expect(q.data).toMatchObject({ queued: true, completed: true, response: "FAKE REPLY: second" });
    const l = await until(async () => {
      const x = await m.call("list_sessions", {});
      return x.data.sessions.find((y) => y.session_id === id && y.turn_count === 2);
    });
    expect(l).toMatchObject({ session_id: id, turn_count: 2 });
    await m.call("kill_session", { session_id: id });
  });
});

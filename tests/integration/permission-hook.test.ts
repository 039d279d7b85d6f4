/**
 * The permission channel on tmux and pty (issue #11, item 6): the session's blocking PermissionRequest hook waits
 * for respond_permission's decision file and prints it; the fake claude applies it like the real CLI (facts §11).
 * allow, deny with a message the model sees, updated_input, allow_always, and the time-out fallback to the dialog.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, contractBackends, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";

const BACKENDS = await contractBackends();

describe.each(BACKENDS)("permission hook (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  let report: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend });
    report = join(w.root, "report.jsonl");
    m = await connect(w, { FAKE_CLAUDE_REPORT: report });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  const events = (id: string) =>
    readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const decisions = () =>
    existsSync(report)
      ? readFileSync(report, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { permission_decision?: Record<string, unknown> })
          .filter((x) => x.permission_decision)
      : [];
  async function waitingOn(id: string, command: string) {
    const r = await m.call("send_message", { session_id: id, message: `FAKE_BASH:${command}` });
    expect(r.data, r.text).toMatchObject({
      completed: false,
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash", tool_input: { command } },
    });
    return r;
  }

  it("allow: the hook takes the decision (no keys), the tool runs, the screen says so; the request shows Claude's suggestions", async () => {
    const cwd = w.dir("allow");
    const id = (await m.callOk("start_session", { cwd })).session_id;
    const r = await waitingOn(id, "touch allowed.txt");
    const suggestion = {
      type: "addRules",
      rules: [{ toolName: "Bash", ruleContent: "touch:*" }],
      behavior: "allow",
      destination: "localSettings",
    };
    expect(r.data.pending_permission).toMatchObject({ suggestions: [suggestion] });
    const listed = await m.call("list_sessions", {});
    expect(listed.data.sessions.find((x) => x.session_id === id)?.pending_permission).toMatchObject({
      suggestions: [suggestion],
    });

    const a = await m.call("respond_permission", { session_id: id, decision: "allow" });
    expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow", tool_name: "Bash" });
    expect(["busy", "idle"]).toContain(a.data.status);
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data).toMatchObject({ completed: true, final_state: "idle", last_response: "FAKE: ran touch allowed.txt" });
    expect(existsSync(join(cwd, "allowed.txt"))).toBe(true);
    const screen = await m.callOk("stream_output", { session_id: id, mode: "screen" });
    expect(screen.text).toContain("Allowed by PermissionRequest hook");
    const ev = events(id);
    expect(ev.find((e) => e.hook_event_name === "PermissionRequest")?.cs_request).toMatch(/^r[0-9]+x[0-9]+$/);
    expect(ev.map((e) => e.hook_event_name)).not.toContain("cs:permission_fallback");
    expect(readdirSync(join(w.stateDir, id, "decisions"))).toEqual([]); // the hook removed the decision it took
    await m.call("kill_session", { session_id: id });
  });

  it("deny with a message: the model gets the message as the tool's result and the turn ends normally", async () => {
    const cwd = w.dir("deny");
    const id = (await m.callOk("start_session", { cwd })).session_id;
    await waitingOn(id, "touch denied.txt");
    const d = await m.call("respond_permission", { session_id: id, decision: "deny", message: "not in this repository" });
    expect(d.data, d.text).toMatchObject({ answered: true, decision: "deny" });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data).toMatchObject({
      completed: true,
      turn_outcome: "completed",
      last_response: "FAKE: permission denied: not in this repository",
    });
    expect(existsSync(join(cwd, "denied.txt"))).toBe(false);
    expect(decisions().at(-1)?.permission_decision).toEqual({ behavior: "deny", message: "not in this repository" });
    await m.call("kill_session", { session_id: id });
  });

  it("updated_input: the edited command runs instead of the requested one; a message with allow is refused", async () => {
    const cwd = w.dir("edit");
    const id = (await m.callOk("start_session", { cwd })).session_id;
    await waitingOn(id, "touch asked.txt");
    const bad = await m.call("respond_permission", { session_id: id, decision: "allow", message: "a note" });
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
    expect(bad.error?.suggestion).toBeTruthy();
    const a = await m.call("respond_permission", {
      session_id: id,
      decision: "allow",
      updated_input: { command: "touch edited.txt", description: "edited" },
    });
    expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow" });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data).toMatchObject({ completed: true, last_response: "FAKE: ran touch edited.txt" });
    expect(existsSync(join(cwd, "edited.txt"))).toBe(true);
    expect(existsSync(join(cwd, "asked.txt"))).toBe(false);
    await m.call("kill_session", { session_id: id });
  });

  it("allow_always applies Claude's suggested rule: the next matching command asks nothing", async () => {
    const cwd = w.dir("always");
    const id = (await m.callOk("start_session", { cwd })).session_id;
    await waitingOn(id, "touch one.txt");
    const a = await m.call("respond_permission", { session_id: id, decision: "allow_always" });
    expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow_always" });
    expect((await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 })).data).toMatchObject({ completed: true });
    expect(decisions().at(-1)?.permission_decision).toMatchObject({
      behavior: "allow",
      updatedPermissions: [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "touch:*" }] }],
    });
    const next = await m.call("send_message", { session_id: id, message: "FAKE_BASH:touch two.txt" });
    expect(next.data, next.text).toMatchObject({ completed: true, final_state: "idle", response: "FAKE: ran touch two.txt" });
    expect(next.data.pending_permission).toBeUndefined();
    expect(existsSync(join(cwd, "two.txt"))).toBe(true);
    // A command the rule does not cover still asks.
    await waitingOn(id, "mkdir sub");
    await m.call("respond_permission", { session_id: id, decision: "allow" });
    expect((await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 })).data).toMatchObject({ completed: true });
    await m.call("kill_session", { session_id: id });
  });

  it("another server on the same state directory answers the request through the hook (the decision is a file, not keys)", async () => {
    const cwd = w.dir("other");
    const id = (await m.callOk("start_session", { cwd })).session_id;
    await waitingOn(id, "touch other.txt");
    const other = await connect(w);
    try {
      const listed = await other.call("list_sessions", {});
      expect(listed.data.sessions.find((x) => x.session_id === id)).toMatchObject({
        status: "waiting_for_permission",
        pending_permission: { tool_name: "Bash" },
      });
      const a = await other.call("respond_permission", { session_id: id, decision: "allow" });
      expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow" });
    } finally {
      await other.close();
    }
    expect((await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 })).data).toMatchObject({
      completed: true,
      last_response: "FAKE: ran touch other.txt",
    });
    expect(existsSync(join(cwd, "other.txt"))).toBe(true);
    await m.call("kill_session", { session_id: id });
  });

  it("interrupt while the hook waits: the turn ends, the hook is ended with the dialog, the next prompt runs at once", async () => {
    const cwd = w.dir("esc");
    const id = (await m.callOk("start_session", { cwd })).session_id;
    await waitingOn(id, "touch never.txt");
    const i = await m.call("interrupt_session", { session_id: id });
    expect(i.data, i.text).toMatchObject({ interrupted: true, status: "idle" });
    const next = await m.call("send_message", { session_id: id, message: "after the interrupt", timeout_ms: 10_000 });
    expect(next.data, next.text).toMatchObject({ completed: true, response: "FAKE REPLY: after the interrupt" });
    expect(existsSync(join(cwd, "never.txt"))).toBe(false);
    // A late decision for the ended request is refused (nothing pending), never typed.
    expect((await m.call("respond_permission", { session_id: id, decision: "allow" })).error?.code).toBe("SESSION_NOT_READY");
    await m.call("kill_session", { session_id: id });
  });

  it("no answer within CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: the hook gives up, the dialog takes over, respond_permission answers by keys", async () => {
    const short = await connect(w, { CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: "800" });
    try {
      const cwd = w.dir("fallback");
      const id = (await short.callOk("start_session", { cwd })).session_id;
      const r = await short.call("send_message", { session_id: id, message: "FAKE_BASH:touch late.txt" });
      expect(r.data, r.text).toMatchObject({ final_state: "waiting_for_permission" });
      await until(async () => events(id).some((e) => e.hook_event_name === "cs:permission_fallback") || undefined, 10_000);
      const still = await short.call("wait_for_completion", { session_id: id, timeout_ms: 500 });
      expect(still.data).toMatchObject({ completed: false, final_state: "waiting_for_permission" });
      // The dialog's keys carry only the decision.
      const bad = await short.call("respond_permission", { session_id: id, decision: "deny", message: "no" });
      expect(bad.error?.code).toBe("INVALID_ARGUMENT");
      const a = await short.call("respond_permission", { session_id: id, decision: "allow" });
      expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow" });
      const done = await short.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
      expect(done.data).toMatchObject({ completed: true, last_response: "FAKE: ran touch late.txt" });
      expect(existsSync(join(cwd, "late.txt"))).toBe(true);
      await short.call("kill_session", { session_id: id });
    } finally {
      await short.close();
    }
  });
});

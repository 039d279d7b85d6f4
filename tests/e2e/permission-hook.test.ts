/**
 * The permission channel with the real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts), on
 * tmux: the blocking PermissionRequest hook takes respond_permission's allow, deny with a message, updated_input;
 * after its time-out the CLI's own dialog answers by keys.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: permissions through the PermissionRequest hook (tmux)", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({
      dirs: ["allow", "deny", "edit", "fallback", "always", "esc"],
      serverEnv: { CLAUDE_SESSIONS_BACKEND: "tmux" },
    });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  async function started(dir: string, mcp = m): Promise<string> {
    const s = await mcp.call("start_session", { cwd: e.dir(dir), permission_mode: "default" });
    expect(s.ok, s.text).toBe(true);
    return s.data.session_id as string;
  }
  async function asks(id: string, command: string, mcp = m) {
    const r = await mcp.call("send_message", { session_id: id, message: `MOCK_BASH:${command}` });
    expect(r.data, r.text).toMatchObject({
      completed: false,
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash", tool_input: { command } },
    });
    return r;
  }
  const hookKey = (id: string) => e.events(id).find((x) => x.hook_event_name === "PermissionRequest")?.cs_request;

  it("allow: the hook answers, the tool runs, the screen says 'Allowed by PermissionRequest hook'", async () => {
    const id = await started("allow");
    const r = await asks(id, "touch allowed.txt");
    expect(Array.isArray((r.data.pending_permission as { suggestions?: unknown }).suggestions)).toBe(true);
    expect(hookKey(id)).toMatch(/^r[0-9]+x[0-9]+$/);
    const a = await m.call("respond_permission", { session_id: id, decision: "allow" });
    expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow", tool_name: "Bash" });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(done.data).toMatchObject({ completed: true, final_state: "idle", last_response: "MOCK: tool done" });
    expect(existsSync(join(e.dir("allow"), "allowed.txt"))).toBe(true);
    const screen = await m.callOk("stream_output", { session_id: id, mode: "screen" });
    expect(screen.text).toContain("Allowed by PermissionRequest hook");
    await m.call("kill_session", { session_id: id });
  });

  it("deny with a message: the API gets the message as the tool's error result; no tool runs; the turn completes", async () => {
    const id = await started("deny");
    await asks(id, "touch denied.txt");
    const d = await m.call("respond_permission", { session_id: id, decision: "deny", message: "not in this repository, please" });
    expect(d.data, d.text).toMatchObject({ answered: true, decision: "deny" });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(done.data).toMatchObject({ completed: true, final_state: "idle", last_response: "MOCK: tool failed" });
    expect(existsSync(join(e.dir("deny"), "denied.txt"))).toBe(false);
    const sent = e.mock
      .mainRequests()
      .find((q) => q.toolResult?.isError && q.toolResult.text.includes("not in this repository, please"));
    expect(sent, "the denial's message reached the model").toBeDefined();
    await m.call("kill_session", { session_id: id });
  });

  it("updated_input: the edited command runs instead of the requested one", async () => {
    const id = await started("edit");
    await asks(id, "touch asked.txt");
    const a = await m.call("respond_permission", {
      session_id: id,
      decision: "allow",
      updated_input: { command: "touch edited.txt", description: "edited by the test" },
    });
    expect(a.data, a.text).toMatchObject({ answered: true });
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(done.data).toMatchObject({ completed: true, last_response: "MOCK: tool done" });
    expect(existsSync(join(e.dir("edit"), "edited.txt"))).toBe(true);
    expect(existsSync(join(e.dir("edit"), "asked.txt"))).toBe(false);
    await m.call("kill_session", { session_id: id });
  });

  it("allow_always applies the CLI's suggestion: the next matching command asks nothing", async () => {
    const id = await started("always");
    const r = await asks(id, "touch one.txt");
    const a = await m.call("respond_permission", { session_id: id, decision: "allow_always" });
    expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow_always" });
    expect((await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 })).data).toMatchObject({
      completed: true,
      last_response: "MOCK: tool done",
    });
    const next = await m.call("send_message", { session_id: id, message: "MOCK_BASH:touch two.txt", timeout_ms: 20_000 });
    expect(next.data, `suggestions were ${JSON.stringify(r.data.pending_permission)}`).toMatchObject({
      completed: true,
      final_state: "idle",
      response: "MOCK: tool done",
    });
    expect(existsSync(join(e.dir("always"), "two.txt"))).toBe(true);
    await m.call("kill_session", { session_id: id });
  });

  it("interrupt while the hook waits: the turn ends and the next prompt runs at once", async () => {
    const id = await started("esc");
    await asks(id, "touch never.txt");
    const i = await m.call("interrupt_session", { session_id: id });
    expect(i.data, i.text).toMatchObject({ interrupted: true, status: "idle" });
    const t0 = Date.now();
    const next = await m.call("send_message", { session_id: id, message: "after the interrupt", timeout_ms: 20_000 });
    expect(next.data, next.text).toMatchObject({ completed: true, response: "MOCK REPLY: after the interrupt" });
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(existsSync(join(e.dir("esc"), "never.txt"))).toBe(false);
    await m.call("kill_session", { session_id: id });
  });

  it("the hook's time-out: the CLI falls back to its dialog and respond_permission answers it by keys", async () => {
    const short = await e.connect({ CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: "1500" });
    try {
      const id = await started("fallback", short);
      await asks(id, "touch late.txt", short);
      await until(() => e.events(id).some((x) => x.hook_event_name === "cs:permission_fallback"), 15_000, 100);
      const bad = await short.call("respond_permission", {
        session_id: id,
        decision: "allow",
        updated_input: { command: "true" },
      });
      expect(bad.error?.code, "the dialog's keys carry only the decision").toBe("INVALID_ARGUMENT");
      const a = await short.call("respond_permission", { session_id: id, decision: "allow" });
      expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow" });
      const done = await short.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
      expect(done.data).toMatchObject({ completed: true, last_response: "MOCK: tool done" });
      expect(existsSync(join(e.dir("fallback"), "late.txt"))).toBe(true);
      await short.call("kill_session", { session_id: id });
    } finally {
      await short.close();
    }
  });
});

/**
 * The real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts): tool use and permission
 * dialogs, Esc during a slow reply, an API error. See tests/helpers/real-claude.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractBackends, failedTurn, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();
const BACKENDS = run ? await contractBackends() : [];

describe.runIf(run)("real claude: tools, permissions, interrupts, API errors", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    // The permission hook off: "c." answers the CLI's own dialog by keys (the hook path: permission-hook.test.ts).
    e = await e2eWorld({
      dirs: ["perm", "edits", ...BACKENDS.map((b) => `esc-${b}`), "fail"],
      serverEnv: { CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: "0" },
    });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("c. Bash asks for permission (hook off, the dialog's keys): the command is visible everywhere; allow runs it, deny does not", async () => {
    const cwd = e.dir("perm");
    const s = await m.call("start_session", { cwd, permission_mode: "default" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const pending = { tool_name: "Bash", tool_input: { command: "sleep 1.5 && touch allowed.txt" } };

    const r = await m.call("send_message", { session_id: id, message: "MOCK_BASH:sleep 1.5 && touch allowed.txt" });
    expect(r.data).toMatchObject({ completed: false, final_state: "waiting_for_permission", pending_permission: pending });
    const w1 = await m.call("wait_for_completion", { session_id: id, timeout_ms: 1000 });
    expect(w1.data).toMatchObject({ completed: false, final_state: "waiting_for_permission", pending_permission: pending });
    const listed = await m.call("list_sessions", {});
    expect(listed.data.sessions.find((x) => x.session_id === id)).toMatchObject({
      status: "waiting_for_permission",
      pending_permission: pending,
    });

    const a = await m.call("respond_permission", { session_id: id, decision: "allow" });
    // No hook fires between the answer and the end of the tool: the server marks the session busy itself.
    expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow", tool_name: "Bash", status: "busy" });
    const running = await m.call("list_sessions", {});
    expect(running.data.sessions.find((x) => x.session_id === id)?.status).toBe("busy");
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(done.data).toMatchObject({ completed: true, final_state: "idle", last_response: "MOCK: tool done" });
    expect(existsSync(join(cwd, "allowed.txt"))).toBe(true);
    // The tool result went back to the API.
    expect(e.mock.mainRequests().some((q) => q.toolResult && !q.toolResult.isError)).toBe(true);

    const r2 = await m.call("send_message", { session_id: id, message: "MOCK_BASH:touch denied.txt" });
    expect(r2.data).toMatchObject({
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash", tool_input: { command: "touch denied.txt" } },
    });
    const d = await m.call("respond_permission", { session_id: id, decision: "deny" });
    expect(d.data, d.text).toMatchObject({ answered: true, decision: "deny" });
    // The real CLI ends the turn on "No" as if interrupted: no tool runs, no Stop hook.
    const done2 = await m.call("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    expect(done2.data).toMatchObject({ completed: true, final_state: "idle", turn_outcome: "interrupted" });
    expect(existsSync(join(cwd, "denied.txt"))).toBe(false);
    const after = await m.call("send_message", { session_id: id, message: "after the denial" });
    expect(after.data).toMatchObject({ final_state: "idle", response: "MOCK REPLY: after the denial" });
    await m.call("kill_session", { session_id: id });
  });

  it("c. permission_mode acceptEdits writes a file without a dialog", async () => {
    const cwd = e.dir("edits");
    const s = await m.call("start_session", { cwd, permission_mode: "acceptEdits" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const file = join(cwd, "written.txt");
    const r = await m.call("send_message", {
      session_id: id,
      message: `MOCK_WRITE:${file}:written by the mock`,
      timeout_ms: 20_000,
    });
    expect(r.data).toMatchObject({ completed: true, final_state: "idle", response: "MOCK: tool done" });
    expect(r.data.pending_permission).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe("written by the mock");
    const ev = e.events(id).map((x) => x.hook_event_name);
    expect(ev).not.toContain("PermissionRequest");
    expect(ev).toEqual(expect.arrayContaining(["PreToolUse", "PostToolUse", "Stop"]));
    // Issue 38: UserPromptSubmit's hook runs in the background, and the turn's events still land behind its line:
    // every event of a prompt (its prompt_id) comes after that prompt's UserPromptSubmit, whatever the CLI version.
    const after = await m.call("send_message", { session_id: id, message: "and a plain turn" });
    expect(after.data).toMatchObject({ final_state: "idle", response: "MOCK REPLY: and a plain turn" });
    const log = e.events(id);
    const prompts = log.filter((x) => x.hook_event_name === "UserPromptSubmit");
    expect(prompts).toHaveLength(2);
    for (const p of prompts) expect(p.prompt_id, "every UserPromptSubmit names its prompt").toEqual(expect.any(String));
    const turnEvents = log.filter((x) => ["PreToolUse", "PostToolUse", "Stop"].includes(x.hook_event_name as string));
    expect(turnEvents.length).toBeGreaterThanOrEqual(4);
    for (const t of turnEvents) {
      expect(t.prompt_id, `${String(t.hook_event_name)} names its prompt`).toEqual(expect.any(String));
      const prompt = log.findIndex((x) => x.hook_event_name === "UserPromptSubmit" && x.prompt_id === t.prompt_id);
      expect(prompt, `${String(t.hook_event_name)} of ${String(t.prompt_id)} has its prompt's line`).toBeGreaterThanOrEqual(0);
      expect(prompt, `${String(t.hook_event_name)} of ${String(t.prompt_id)} lands after its prompt's line`).toBeLessThan(
        log.indexOf(t),
      );
    }
    await m.call("kill_session", { session_id: id });
  });

  it.each(BACKENDS)("d. Esc during a slow reply: interrupt_session leaves the session idle and usable (%s)", async (backend) => {
    const s = await m.call("start_session", { cwd: e.dir(`esc-${backend}`), permission_mode: "default", backend });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const slow = `MOCK_SLOW:60 a long job (${backend})`;
    await m.call("send_message", { session_id: id, message: slow, wait_for_response: false });
    await e.mock.waitForRequest((q) => q.lastUserText === slow, 10_000); // the reply is under way
    const i = await m.call("interrupt_session", { session_id: id });
    expect(i.data, i.text).toMatchObject({ interrupted: true, status: "idle" });
    const w = await m.call("wait_for_completion", { session_id: id, timeout_ms: 1000 });
    expect(w.data).toMatchObject({ completed: true, turn_outcome: "interrupted" });
    // The next prompt goes through alone (the CLI puts an interrupted prompt back into its input box).
    const next = `still there (${backend})?`;
    const r = await m.call("send_message", { session_id: id, message: next });
    expect(r.data).toMatchObject({ final_state: "idle", response: `MOCK REPLY: ${next}` });
    expect(e.requestsWith(next)).toHaveLength(1);
    await m.call("kill_session", { session_id: id });
  });

  it("e. HTTP 500 from the API: final_state error with the API's message; the next prompt works", async () => {
    const s = await m.call("start_session", { cwd: e.dir("fail"), permission_mode: "default" });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const r = failedTurn(await m.call("send_message", { session_id: id, message: "MOCK_ERROR:500", timeout_ms: 30_000 }));
    expect(r).toMatchObject({ completed: true, final_state: "error", turn_outcome: "failed" });
    expect(r.error).toContain("mock error 500");
    expect(e.events(id).map((x) => x.hook_event_name)).toContain("StopFailure");
    const ok = await m.call("send_message", { session_id: id, message: "and now?" });
    expect(ok.data).toMatchObject({ final_state: "idle", response: "MOCK REPLY: and now?" });
    await m.call("kill_session", { session_id: id });
  });
});

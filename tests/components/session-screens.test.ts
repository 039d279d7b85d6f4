/**
 * Issue 20: no screen stalls a session silently. The session layer on a scripted backend (tests/helpers/fake-backend.ts):
 * a turn that shows one of the real CLI's blocking screens (tests/fixtures/screens) comes back `blocked` with the
 * screen's kind, text and choices, answer_prompt presses the keys of the chosen row (never the caller's text), and a
 * screen the server does not know becomes `blocked: {kind: "unknown"}` instead of a silent busy.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import { SessionError } from "../../src/core/errors.js";
import { foldAll, type LogEvent } from "../../src/events/reducer.js";
import { noticeOf } from "../../src/server/mcp/notify.js";
import type { SessionChange } from "../../src/sessions/service.js";
import type { ScriptedScreen } from "../helpers/fake-backend.js";
import { fakeService } from "../helpers/fake-service.js";
import { until } from "../helpers/wait.js";

const f = fakeService({ CLAUDE_SESSIONS_UNKNOWN_SCREEN_MS: "1000" });
const sample = (name: string) => readFileSync(join(import.meta.dirname, "..", "fixtures", "screens", name), "utf8");
const errorOf = async (p: Promise<unknown>) =>
  (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as SessionError;
const ev = (hook_event_name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({
  hook_event_name,
  ...extra,
});

/** The auto-mode screen of 2.1.331: Enter stays in auto mode and asks (a permission request), Esc cancels the turn. */
const autoMode = (): ScriptedScreen => ({
  text: sample("auto-mode-cant-check.2.1.331.txt"),
  onKey: (k) => (k === "Enter" ? "permission" : k === "Escape" ? "interrupted" : k === "BTab" ? "interrupted" : undefined),
});

async function blockedTurn(screen: ScriptedScreen) {
  f.fake.screenFor = (p) => (p.startsWith("block") ? screen : undefined);
  const s = await f.svc.start(f.startIn());
  const r = await f.svc.send(f.sendIn(s.session_id, "block me"));
  return { s, r };
}

describe("blocking screens on a scripted backend", () => {
  it("the auto-mode screen comes back as blocked with its choices, in lists too; a send is refused, not typed into it", async () => {
    const { s, r } = await blockedTurn(autoMode());
    expect(r).toMatchObject({ final_state: "blocked", completed: false, timed_out: false });
    expect(r.blocked).toMatchObject({
      kind: "auto_mode_unavailable",
      choices: ["stay in auto mode", "leave for accept edits mode and stop", "cancel"],
    });
    expect(r.blocked!.text).toMatch(/Auto mode can't check actions in this session/);
    expect(api.sendOutput.safeParse(r).success).toBe(true);
    const w = await f.svc.wait(api.waitInput.parse({ session_id: s.session_id, timeout_ms: 1000 }));
    expect(w).toMatchObject({ final_state: "blocked", timed_out: false, blocked: { kind: "auto_mode_unavailable" } });
    const l = await f.svc.list(api.listInput.parse({}));
    // The fold reaches state.json in a batched write.
    const row = await until(
      async () =>
        (await f.svc.list(api.listInput.parse({ status_filter: "active" }))).sessions.find(
          (x) => x.session_id === s.session_id && x.status === "blocked",
        ),
      5000,
      10,
    );
    expect(l.sessions.length).toBe(1);
    expect(row).toMatchObject({ status: "blocked", blocked: { kind: "auto_mode_unavailable" } });
    const pastes = f.fake.sessions.get(s.session_id)!.pastes.length;
    const e = await errorOf(f.svc.send({ ...f.sendIn(s.session_id, "more"), queue: true }));
    expect(e.code).toBe("SESSION_BUSY");
    expect(e.suggestion).toMatch(/answer_prompt/);
    expect(f.fake.sessions.get(s.session_id)!.pastes.length).toBe(pastes);
  });

  it("answer_prompt presses the chosen row's key; staying in auto mode turns into a permission request", async () => {
    const { s } = await blockedTurn(autoMode());
    const a = await f.svc.answerPrompt(api.answerPromptInput.parse({ session_id: s.session_id, choice: "Stay in auto mode" }));
    expect(a).toMatchObject({
      answered: true,
      kind: "auto_mode_unavailable",
      choice: "stay in auto mode",
      status: "waiting_for_permission",
    });
    expect(api.answerPromptOutput.safeParse(a).success).toBe(true);
    expect(f.fake.sessions.get(s.session_id)!.keys.slice(-1)).toEqual(["Enter"]);
    const w = await f.svc.wait(api.waitInput.parse({ session_id: s.session_id, timeout_ms: 1000 }));
    expect(w).toMatchObject({ final_state: "waiting_for_permission", pending_permission: { tool_name: "Bash" } });
    expect(w.blocked).toBeUndefined();
  });

  it("a choice that is not on the screen is refused and presses nothing; Esc by number cancels the turn", async () => {
    const { s } = await blockedTurn(autoMode());
    const keys = () => f.fake.sessions.get(s.session_id)!.keys.length;
    const before = keys();
    for (const choice of ["rm -rf /", "\u001b[201~\r", 4]) {
      const e = await errorOf(f.svc.answerPrompt(api.answerPromptInput.parse({ session_id: s.session_id, choice })));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toMatch(/1\. stay in auto mode; 2\. leave for accept edits mode and stop; 3\. cancel/);
    }
    expect(keys()).toBe(before);
    const a = await f.svc.answerPrompt(api.answerPromptInput.parse({ session_id: s.session_id, choice: 3 }));
    expect(a).toMatchObject({ choice: "cancel", status: "idle" });
    expect(f.fake.sessions.get(s.session_id)!.keys.slice(-1)).toEqual(["Escape"]);
    const w = await f.svc.wait(api.waitInput.parse({ session_id: s.session_id, timeout_ms: 1000 }));
    expect(w).toMatchObject({ final_state: "idle", turn_outcome: "interrupted" });
  });

  it("interrupt_session stops a blocked turn (Esc); respond_permission points to answer_prompt", async () => {
    const { s } = await blockedTurn(autoMode());
    const e = await errorOf(f.svc.respondPermission(api.respondInput.parse({ session_id: s.session_id, decision: "allow" })));
    expect(e.code).toBe("SESSION_NOT_READY");
    expect(e.suggestion).toMatch(/answer_prompt/);
    const i = await f.svc.interrupt(api.interruptInput.parse({ session_id: s.session_id, timeout_ms: 3000 }));
    expect(i).toMatchObject({ interrupted: true, status: "idle" });
    expect(f.fake.sessions.get(s.session_id)!.keys).toContain("Escape");
  });

  it("answer_prompt on a session that is not blocked says so", async () => {
    const s = await f.svc.start(f.startIn());
    const e = await errorOf(f.svc.answerPrompt(api.answerPromptInput.parse({ session_id: s.session_id, choice: 1 })));
    expect(e.code).toBe("SESSION_NOT_READY");
    expect(api.answerPromptInput.safeParse({ session_id: s.session_id, choice: "" }).success).toBe(false);
  });

  it("a menu screen is answered by moving its cursor: MCP approval's first row is two Ups and Enter", async () => {
    const { s, r } = await blockedTurn({
      text: sample("mcp-server.2.1.331.txt"),
      onKey: (k) => (k === "Enter" ? "end" : undefined),
    });
    expect(r.blocked).toMatchObject({
      kind: "mcp_server",
      choices: [
        "Use this MCP server",
        "Use this and all future MCP servers in this project",
        "Continue without using this MCP server",
      ],
    });
    const a = await f.svc.answerPrompt(api.answerPromptInput.parse({ session_id: s.session_id, choice: "use this mcp server" }));
    expect(a.choice).toBe("Use this MCP server");
    expect(f.fake.sessions.get(s.session_id)!.keys.slice(-3)).toEqual(["Up", "Up", "Enter"]);
    const w = await f.svc.wait(api.waitInput.parse({ session_id: s.session_id, timeout_ms: 1000 }));
    expect(w).toMatchObject({ completed: true, final_state: "idle", last_response: "FAKE REPLY: block me" });
  });

  it("an answered screen still drawn after the answer's hook (a loaded CLI redraws late) is not reported as blocked again", async () => {
    const { s, r } = await blockedTurn({
      text: sample("plan-exit.2.1.331.txt"),
      onKey: (k) => (k === "Enter" ? "slow-redraw" : undefined),
      redrawMs: 2500,
    });
    expect(r.blocked).toMatchObject({ kind: "plan_approval" });
    const a = await f.svc.answerPrompt(api.answerPromptInput.parse({ session_id: s.session_id, choice: 1 }));
    expect(a).toMatchObject({ answered: true, kind: "plan_approval" });
    const w = await f.svc.wait(api.waitInput.parse({ session_id: s.session_id, timeout_ms: 10_000 }));
    expect(w).toMatchObject({ completed: true, final_state: "idle", last_response: "FAKE REPLY: block me" });
    expect(w.blocked).toBeUndefined();
  }, 15_000);

  const known: Array<[string, string]> = [
    ["auto-mode-cant-check.2.1.331.txt", "auto_mode_unavailable"],
    ["trust.2.1.331.txt", "trust"],
    ["mcp-server.2.1.331.txt", "mcp_server"],
    ["plan-exit.2.1.331.txt", "plan_approval"],
    ["plan-proceed.from-strings.2.1.331.txt", "plan_approval"],
    ["usage-limit.from-strings.2.1.331.txt", "usage_limit"],
    ["question.2.1.330.txt", "question"],
  ];
  for (const [file, kind] of known) {
    it(`the terminal driver reports ${file} as blocked: ${kind}`, async () => {
      const { r } = await blockedTurn({ text: sample(file) });
      expect(r).toMatchObject({ final_state: "blocked", blocked: { kind } });
      expect(r.blocked!.choices.length).toBeGreaterThanOrEqual(2);
    });
  }

  it("a screen the server does not know becomes blocked: unknown after the quiet time, never a silent busy", async () => {
    const t0 = Date.now();
    const { r } = await blockedTurn({ text: sample("unknown-screen.invented.txt") });
    expect(r).toMatchObject({
      final_state: "blocked",
      timed_out: false,
      blocked: { kind: "unknown", choices: ["Go ahead", "Stop here"] },
    });
    expect(r.blocked!.text).toMatch(/A brand-new question/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });

  it("a turn at work (spinner) is not blocked, however long it is quiet", async () => {
    f.fake.screenFor = () => ({ text: ["", "✶ Waddling… (3s · ↓ 4 tokens)", "", "  esc to interrupt"].join("\n") });
    const s = await f.svc.start(f.startIn());
    const r = await f.svc.send({ ...f.sendIn(s.session_id, "slow"), timeout_ms: 1500 });
    expect(r).toMatchObject({ final_state: "busy", timed_out: true });
    expect(r.blocked).toBeUndefined();
  });
});

describe("blocked in the fold and the notifications", () => {
  const blockedEv = ev("cs:blocked", {
    blocked: { kind: "auto_mode_unavailable", text: "Auto mode can't check", choices: ["a", "b"] },
  });
  it("cs:blocked holds a running turn; a hook of the turn or cs:unblocked moves it on; a malformed one is ignored", () => {
    const busy = foldAll([ev("cs:spawn"), ev("SessionStart"), ev("UserPromptSubmit")]);
    const b = foldAll([blockedEv], busy);
    expect(b).toMatchObject({ status: "blocked", blocked: { kind: "auto_mode_unavailable", choices: ["a", "b"], from: "busy" } });
    expect(foldAll([ev("PermissionRequest", { tool_name: "Bash" })], b)).toMatchObject({ status: "waiting_for_permission" });
    expect(foldAll([ev("PermissionRequest", { tool_name: "Bash" })], b).blocked).toBeUndefined();
    expect(foldAll([ev("Stop")], b)).toMatchObject({ status: "idle", turn_count: 1 });
    expect(foldAll([ev("cs:unblocked")], b).status).toBe("busy");
    expect(foldAll([ev("cs:interrupted")], b)).toMatchObject({ status: "idle", last_turn: "interrupted" });
    expect(foldAll([ev("cs:blocked", { blocked: { kind: "nonsense", text: 1, choices: "x" } as never })], busy).status).toBe(
      "busy",
    );
    // Not a turn's screen: a dead session stays dead.
    expect(foldAll([ev("SessionEnd"), blockedEv], busy).status).toBe("dead");
  });

  it("a blocked session is announced as a notifications/message with its kind and choices", () => {
    const busy = foldAll([ev("cs:spawn"), ev("SessionStart"), ev("UserPromptSubmit")]);
    const fold = foldAll([blockedEv], busy);
    const c: SessionChange = { session_id: "s1", previous: "busy", status: "blocked", events: [blockedEv], fold };
    expect(noticeOf(c)).toEqual({
      level: "warning",
      notice: {
        event: "blocked",
        session_id: "s1",
        status: "blocked",
        previous: "busy",
        kind: "auto_mode_unavailable",
        text: "Auto mode can't check",
        choices: ["a", "b"],
      },
    });
  });
});

/**
 * The pure parts of the permission channel (issue #11, item 6): the hook's settings entry, the fold of a request
 * with its key, suggestions and fallback, and the decision the hook prints for each answer.
 */
import { describe, expect, it } from "vitest";
import { hooksSettings } from "../../src/claude/hooks.js";
import { hookDecision, hookWaits } from "../../src/runners/terminal/hook-answer.js";
import { foldAll, type LogEvent } from "../../src/events/reducer.js";
import { SessionError } from "../../src/core/errors.js";

const ev = (name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({ hook_event_name: name, ...extra });
const suggestion = {
  type: "addRules",
  rules: [{ toolName: "Bash", ruleContent: "touch:*" }],
  behavior: "allow",
  destination: "localSettings",
};
const asked = [
  ev("cs:spawn"),
  ev("SessionStart"),
  ev("UserPromptSubmit", { prompt: "p" }),
  ev("PreToolUse", { tool_name: "Bash" }),
];
const request = ev("PermissionRequest", {
  tool_name: "Bash",
  tool_input: { command: "touch a" },
  permission_suggestions: [suggestion],
  cs_request: "r12x34",
});

describe("the permission channel", () => {
  it("settings: PermissionRequest runs the blocking hook with server-made arguments and a longer CLI time-out; the rest append", () => {
    const s = hooksSettings("/st/id/events.jsonl", {
      script: "/st/bin/permission.sh",
      decisionsDir: "/st/id/decisions",
      timeoutMs: 120_000,
    }) as {
      hooks: Record<string, Array<{ hooks: Array<{ command: string; timeout?: number }> }>>;
    };
    expect(s.hooks.PermissionRequest![0]!.hooks[0]).toEqual({
      type: "command",
      command: "exec '/st/bin/permission.sh' '/st/id/events.jsonl' '/st/id/decisions' 120000",
      timeout: 150,
    });
    expect(s.hooks.Stop![0]!.hooks[0]!.command).toMatch(/paste' -s/);
    expect(s.hooks.Stop![0]!.hooks[0]!.timeout).toBeUndefined();
    const off = hooksSettings("/st/id/events.jsonl") as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    expect(off.hooks.PermissionRequest![0]!.hooks[0]!.command).toMatch(/paste' -s/);
  });

  it("the fold keeps the request's key and Claude's suggestions; cs:permission_fallback of that key marks it for the dialog", () => {
    const f = foldAll([...asked, request]);
    expect(f.status).toBe("waiting_for_permission");
    expect(f.pending_permission).toMatchObject({ tool_name: "Bash", request: "r12x34", suggestions: [suggestion] });
    expect(hookWaits(f.pending_permission)).toBe(true);
    // Another request's (late) fallback changes nothing.
    expect(foldAll([ev("cs:permission_fallback", { cs_request: "r1x1" })], f).pending_permission?.fallback).toBeUndefined();
    const g = foldAll([ev("cs:permission_fallback", { cs_request: "r12x34" })], f);
    expect(g.pending_permission?.fallback).toBe(true);
    expect(g.status).toBe("waiting_for_permission");
    expect(hookWaits(g.pending_permission)).toBe(false);
    // A request without a key (the hook off, or an older session) is answered by keys.
    expect(hookWaits(foldAll([...asked, ev("PermissionRequest", { tool_name: "Bash" })]).pending_permission)).toBe(false);
    // A key that is not one the hook makes is never used as a file name.
    expect(
      hookWaits(foldAll([...asked, ev("PermissionRequest", { tool_name: "Bash", cs_request: "../../x" })]).pending_permission),
    ).toBe(false);
  });

  it("the decision printed for each answer follows the CLI's schema (2.1.330)", () => {
    const p = foldAll([...asked, request]).pending_permission!;
    const out = (d: object) => ({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: d } });
    expect(hookDecision(p, { decision: "allow" })).toEqual(out({ behavior: "allow" }));
    expect(hookDecision(p, { decision: "allow", updated_input: { command: "touch b" } })).toEqual(
      out({ behavior: "allow", updatedInput: { command: "touch b" } }),
    );
    expect(hookDecision(p, { decision: "allow_always" })).toEqual(out({ behavior: "allow", updatedPermissions: [suggestion] }));
    expect(hookDecision(p, { decision: "deny" })).toEqual(out({ behavior: "deny" }));
    expect(hookDecision(p, { decision: "deny", message: 'no "quotes" $(x)\n' })).toEqual(
      out({ behavior: "deny", message: 'no "quotes" $(x)\n' }),
    );
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e instanceof SessionError ? { code: e.code, suggestion: e.suggestion } : undefined;
      }
      return undefined;
    };
    expect(refused(() => hookDecision(p, { decision: "allow", message: "note" }))).toMatchObject({
      code: "INVALID_ARGUMENT",
      suggestion: expect.any(String),
    });
    const bare = foldAll([...asked, ev("PermissionRequest", { tool_name: "Bash", cs_request: "r1x2" })]).pending_permission!;
    expect(refused(() => hookDecision(bare, { decision: "allow_always" }))).toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

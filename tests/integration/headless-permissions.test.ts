/**
 * Permission requests of the headless engine on the real CLI: canUseTool surfaces a request, the caller's
 * answer (allow, deny with a message, updated input, allow_always) or the timeout decides, and the events
 * log shows PermissionRequest then cs:answered as the interactive backends' logs do.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timeoutMessage } from "../../src/runners/headless/permissions.js";
import type { HeadlessSession } from "../../src/runners/headless/session.js";
import type { PermissionRequestInfo } from "../../src/runners/headless/types.js";
import { headlessCliOrSkip, headlessWorld, hookNames, type HeadlessWorld } from "../helpers/headless.js";

const run = headlessCliOrSkip();

describe.runIf(run)("headless engine: permissions on the real CLI", () => {
  let w: HeadlessWorld;
  let s: HeadlessSession;
  let cwd: string;
  const asked: PermissionRequestInfo[] = [];
  beforeAll(async () => {
    w = await headlessWorld({ dirs: ["perm", "timeout"] });
    cwd = w.dir("perm");
    s = await w.start("perm", "perm", { on_permission: (r) => asked.push(r) });
  });
  afterAll(async () => {
    await w?.cleanup();
  });

  /** Sends a prompt that makes the mock call a tool, and resolves with the request once it waits. */
  async function ask(prompt: string): Promise<{ req: PermissionRequestInfo; turn: ReturnType<HeadlessSession["send"]> }> {
    const n = asked.length;
    const turn = s.send(prompt);
    const f = await s.waitFor((x) => x.status === "waiting_for_permission", 20_000);
    expect(f?.pending_permission).toBeDefined();
    expect(asked.length).toBe(n + 1);
    const req = asked[n]!;
    expect(s.pendingPermissions()).toEqual([req]);
    return { req, turn };
  }

  it("allow: the request surfaces (tool, input, suggestions), the tool runs, the log has PermissionRequest then cs:answered", async () => {
    const file = join(cwd, "allowed.txt");
    const { req, turn } = await ask(`MOCK_WRITE:${file}:hello`);
    expect(req).toMatchObject({ tool_name: "Write", tool_input: { file_path: file, content: "hello" } });
    expect(req.id).toMatch(/^toolu_/);
    expect(Array.isArray(req.suggestions)).toBe(true);
    expect(s.fold.pending_permission).toMatchObject({ tool_name: "Write", tool_input: { file_path: file, content: "hello" } });
    expect(s.respondPermission({ decision: "allow" })?.id).toBe(req.id);
    const r = await turn;
    expect(r).toMatchObject({ subtype: "success", result: "MOCK: tool done", permission_denials: [] });
    expect(readFileSync(file, "utf8")).toBe("hello");
    const names = hookNames(w.events("perm"));
    const i = names.lastIndexOf("PermissionRequest");
    expect(names.slice(i - 1)).toEqual(["PreToolUse", "PermissionRequest", "cs:answered", "PostToolUse", "Stop"]);
    expect(s.fold).toMatchObject({ status: "idle", last_turn: "completed" });
    expect(s.respondPermission({ decision: "allow" })).toBeUndefined();
  });

  it("deny with a message: Claude gets the message as the tool's error, the result lists the denial", async () => {
    const file = join(cwd, "denied.txt");
    const from = w.mock.requests.length;
    const { req, turn } = await ask(`MOCK_WRITE:${file}:nope`);
    s.respondPermission({ decision: "deny", message: "Not in this directory, please." }, req.id);
    const r = await turn;
    expect(r.result).toBe("MOCK: tool failed");
    expect(r.permission_denials).toEqual([
      { tool_name: "Write", tool_use_id: req.id, tool_input: { file_path: file, content: "nope" } },
    ]);
    expect(existsSync(file)).toBe(false);
    const toolResult = w.mainSince(from).find((q) => q.toolResult)?.toolResult;
    expect(toolResult).toMatchObject({ isError: true, text: "Not in this directory, please." });
    const names = hookNames(w.events("perm"));
    expect(names.slice(names.lastIndexOf("PermissionRequest"))).toEqual(["PermissionRequest", "cs:answered", "Stop"]);
  });

  it("allow with updated_input: the tool runs with the caller's input", async () => {
    const file = join(cwd, "updated.txt");
    const { req, turn } = await ask(`MOCK_WRITE:${file}:original`);
    s.respondPermission({ decision: "allow", updated_input: { ...req.tool_input, content: "changed by the caller" } });
    expect((await turn).result).toBe("MOCK: tool done");
    expect(readFileSync(file, "utf8")).toBe("changed by the caller");
  });

  it("interrupt while a request waits: the request is withdrawn and the turn ends interrupted", async () => {
    const { turn } = await ask(`MOCK_WRITE:${join(cwd, "never.txt")}:x`);
    expect(await s.interrupt()).toBe(true);
    const r = await turn;
    expect(r.interrupted).toBe(true);
    expect(s.pendingPermissions()).toEqual([]);
    expect(s.fold).toMatchObject({ status: "idle", last_turn: "interrupted" });
    expect(existsSync(join(cwd, "never.txt"))).toBe(false);
  });

  it("allow_always applies the suggested rule: the same kind of call is not asked again", async () => {
    const { req, turn } = await ask("MOCK_BASH:mkdir always-a");
    expect(req.tool_name).toBe("Bash");
    // 2.1.330 suggests a Bash rule for this command (in the project's local settings) and acceptEdits for the session.
    expect(req.suggestions).toContainEqual(
      expect.objectContaining({
        type: "addRules",
        behavior: "allow",
        rules: [{ toolName: "Bash", ruleContent: "mkdir always-a *" }],
      }),
    );
    s.respondPermission({ decision: "allow_always" });
    expect((await turn).result).toBe("MOCK: tool done");
    expect(existsSync(join(cwd, "always-a"))).toBe(true);
    const n = asked.length;
    const r = await s.send("MOCK_BASH:mkdir always-b");
    expect(r.result).toBe("MOCK: tool done");
    expect(asked.length).toBe(n);
    expect(existsSync(join(cwd, "always-b"))).toBe(true);
  });

  it("a request nobody answers is denied after the timeout, with a message saying so", async () => {
    const seen: PermissionRequestInfo[] = [];
    const t = await w.start("timeout", "timeout", { permission_timeout_ms: 1500, on_permission: (r) => seen.push(r) });
    const file = join(w.dir("timeout"), "late.txt");
    const from = w.mock.requests.length;
    const t0 = Date.now();
    const r = await t.send(`MOCK_WRITE:${file}:late`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(seen).toHaveLength(1);
    expect(r.result).toBe("MOCK: tool failed");
    expect(r.permission_denials).toHaveLength(1);
    expect(existsSync(file)).toBe(false);
    expect(w.mainSince(from).find((q) => q.toolResult)?.toolResult?.text).toBe(timeoutMessage(1500));
    expect(t.pendingPermissions()).toEqual([]);
    expect(t.fold).toMatchObject({ status: "idle", last_turn: "completed" });
  });
});

/**
 * Reading Claude Code's `claude agents --json` and `claude --bg` output (src/claude/native.ts), on samples captured
 * from the real CLIs (tests/fixtures/native), and the schema's guard on native_session_id.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import { attachArgs, backgroundedId, isExiting, isRunning, parseAgentsJson, resumeArgs } from "../../src/claude/native.js";
import { loadConfig } from "../../src/config.js";
import { SessionError } from "../../src/core/errors.js";
import { footerPermissionMode } from "../../src/runners/terminal/screen/screens.js";
import { checkRunningMode } from "../../src/sessions/gates.js";

const sample = (name: string) => readFileSync(join(import.meta.dirname, "../fixtures/native", name), "utf8");

describe("claude agents --json", () => {
  it("2.1.331, running and idle: every field, in this server's names", () => {
    const [s] = parseAgentsJson(sample("agents-2.1.331.json"));
    expect(s).toEqual({
      id: "1f1b096b",
      kind: "background",
      state: "working",
      status: "idle",
      pid: 7159,
      cwd: "/tmp/h20b/work",
      claude_session_id: "1f1b096b-9164-451c-837a-55448a06e4bf",
      name: "say hello",
      started_at: new Date(1795567144634).toISOString(),
    });
    expect(isRunning(s!)).toBe(true);
  });

  it("2.1.331 --all after claude stop: no pid, state stopped, not running", () => {
    const [s] = parseAgentsJson(sample("agents-all-stopped-2.1.331.json"));
    expect(s).toMatchObject({ id: "1f1b096b", state: "stopped" });
    expect(s!.pid).toBeUndefined();
    expect(isRunning(s!)).toBe(false);
  });

  it("2.1.197 prints no pid and no status: a working job counts as running", () => {
    const [s] = parseAgentsJson(sample("agents-2.1.197.json"));
    expect(s).toMatchObject({ id: "ac05b8bc", state: "working", claude_session_id: "ac05b8bc-cfa5-4bea-ad63-158e301372ab" });
    expect(s!.status).toBeUndefined();
    expect(isRunning(s!)).toBe(true);
    expect(isRunning({ kind: "background", id: "x", state: "done" })).toBe(false);
  });

  it("just stopped: the job says stopped while the process is still listed (measured on 2.1.331 right after claude stop)", () => {
    expect(isExiting({ kind: "background", id: "x", state: "stopped", pid: 11306 })).toBe(true);
    expect(isExiting({ kind: "background", id: "x", state: "stopped" })).toBe(false);
    expect(isExiting({ kind: "background", id: "x", state: "working", pid: 1, status: "idle" })).toBe(false);
  });

  it("malformed output: not JSON or not an array is an error; bad entries and fields are dropped, not trusted", () => {
    expect(() => parseAgentsJson("")).toThrow(/no JSON/);
    expect(() => parseAgentsJson("Usage: claude [options]")).toThrow(/no JSON/);
    expect(() => parseAgentsJson('{"id":"a"}')).toThrow(/array/);
    const out = parseAgentsJson(
      JSON.stringify([
        null,
        "text",
        { kind: "background", id: "--help", state: "working" }, // an id that would be an option: dropped
        { kind: "background", state: "working" }, // no id: dropped
        { kind: "robot", id: "abc" }, // an unknown kind: dropped
        { kind: "interactive", pid: 42, cwd: "/w", startedAt: 1 }, // interactive ones have no id: kept, read-only
        {
          kind: "background",
          id: "ok1",
          pid: -3,
          sessionId: "../../etc/passwd",
          startedAt: "yesterday",
          state: 7,
          cwd: "a\0b",
          name: "n",
        },
      ]),
    );
    expect(out).toEqual([
      { kind: "interactive", pid: 42, cwd: "/w", started_at: new Date(1).toISOString() },
      { kind: "background", id: "ok1", name: "n" },
    ]);
  });
});

describe("claude --bg and claude attach", () => {
  it("the id in the 'backgrounded · <id>' line", () => {
    expect(backgroundedId(sample("bg-2.1.331.txt"))).toBe("1f1b096b");
    expect(backgroundedId("Starting background service…")).toBeUndefined();
    expect(backgroundedId("backgrounded · -rf")).toBeUndefined();
  });

  it("attach argv: the id is an argument, never an option", () => {
    expect(attachArgs("1f1b096b")).toEqual(["attach", "1f1b096b"]);
    expect(() => attachArgs("-h")).toThrow();
    expect(() => attachArgs("a b")).toThrow();
  });

  it("send_message's schema: native_session_id takes a short id and nothing that could be an option or a path", () => {
    expect(api.sendInput.parse({ native_session_id: "1f1b096b", message: "hi" }).native_session_id).toBe("1f1b096b");
    for (const bad of ["", "-h", "--help", "a/b", "a b", "x".repeat(65), "native:1f1b096b"]) {
      expect(api.sendInput.safeParse({ native_session_id: bad, message: "hi" }).success, bad).toBe(false);
    }
    expect(api.listInput.parse({}).include_native).toBe(false);
  });
});

describe("native background sessions pass the same permission-mode gates", () => {
  const screen = (name: string) => readFileSync(join(import.meta.dirname, "../fixtures/screens", name), "utf8");
  const rule = "─".repeat(60);
  const idle = (footer: string) => `● hi\n\n${rule}\n❯\u00a0\n${rule}\n  ${footer}\n`;

  it("the mode an idle screen's footer shows, on real screens and on each indicator of the CLI's mode table", () => {
    expect(footerPermissionMode(screen("idle-start.txt"))).toBe("default"); // "? for shortcuts": no indicator
    expect(footerPermissionMode(screen("paste-lines-2.1.330.txt"))).toBe("default"); // "⏸ manual mode on"
    expect(footerPermissionMode(screen("rate-limit-retrying.2.1.330.txt"))).toBe("auto");
    expect(footerPermissionMode(idle("⏵⏵ accept edits on (shift+tab to cycle)"))).toBe("acceptEdits");
    expect(footerPermissionMode(idle("⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents"))).toBe("bypassPermissions");
    expect(footerPermissionMode(idle("⏸ plan mode on (shift+tab to cycle)"))).toBe("plan");
    expect(footerPermissionMode(idle("⏵⏵ don't ask on"))).toBe("dontAsk");
    // Words above the input box (a reply, a dialog's text) are not the footer.
    expect(footerPermissionMode(`bypass permissions on\n${idle("? for shortcuts")}`)).toBe("default");
  });

  it("a running session in a mode the server refuses is refused (PERMISSION_DENIED): bypass without the switch, a mode not listed", () => {
    const denied = (env: Record<string, string>, mode: string) => {
      try {
        checkRunningMode(loadConfig(env), mode, "background session abc");
      } catch (e) {
        if (e instanceof SessionError) return e;
        throw e;
      }
      return undefined;
    };
    expect(denied({}, "bypassPermissions")?.code).toBe("PERMISSION_DENIED");
    expect(denied({}, "bypassPermissions")?.details).toMatchObject({
      permission_mode: "bypassPermissions",
      variable: "CLAUDE_SESSIONS_ALLOW_BYPASS=1",
    });
    expect(denied({ CLAUDE_SESSIONS_ALLOW_BYPASS: "1" }, "bypassPermissions")).toBeUndefined();
    expect(denied({ CLAUDE_SESSIONS_PERMISSION_MODES: "default,plan" }, "acceptEdits")?.message).toMatch(
      /acceptEdits.*nothing was typed/,
    );
    expect(denied({ CLAUDE_SESSIONS_PERMISSION_MODES: "default,plan" }, "plan")).toBeUndefined();
    expect(denied({ CLAUDE_SESSIONS_PERMISSION_MODES: "plan" }, "default")).toBeUndefined(); // the server's default
    expect(denied({}, "acceptEdits")).toBeUndefined();
  });

  it("a stopped one is continued in the mode the server chose, given explicitly before --resume (never a saved one)", () => {
    const conv = "1f1b096b-9164-451c-837a-55448a06e4bf";
    expect(resumeArgs(conv, "-a prompt", "default")).toEqual([
      "--bg",
      "--permission-mode",
      "default",
      "--resume",
      conv,
      "--",
      "-a prompt",
    ]);
    expect(() => resumeArgs(conv, "x", "--dangerously-skip-permissions")).toThrow(/not a permission mode/);
    expect(() => resumeArgs("--help", "x", "default")).toThrow(/not a conversation id/);
  });
});

/**
 * The pure parts of issue #14's MCP surface: resource URIs, what a session change means as a notification, the
 * audit log's file handling and --since, the redacted config, and the time-limit settings.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { initialFold, type Folded, type LogEvent } from "../../src/events/reducer.js";
import { AuditLog, parseSince, readAudit, sessionOf } from "../../src/store/audit.js";
import { noticeOf } from "../../src/server/mcp/notify.js";
import { parseUri, resourceUri } from "../../src/server/mcp/resources.js";
import { effectiveConfig } from "../../src/server/tools/configure.js";
import type { SessionChange } from "../../src/sessions/service.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function change(
  previous: SessionChange["previous"],
  status: SessionChange["status"],
  fold: Partial<Folded> = {},
  events: LogEvent[] = [],
): SessionChange {
  return { session_id: "s1", status, events, fold: { ...initialFold(), status, ...fold }, ...(previous ? { previous } : {}) };
}

describe("resource URIs", () => {
  it("round-trips the four kinds and refuses anything else", () => {
    for (const kind of ["summary", "screen", "transcript", "events"] as const)
      expect(parseUri(resourceUri("ab_1-2", kind))).toEqual({ id: "ab_1-2", kind });
    for (const bad of [
      "session://",
      "session://a b",
      "session://a/other",
      "file:///etc/passwd",
      "session://a;b/screen",
      "session://../x",
      `session://${"x".repeat(65)}`,
    ]) {
      expect(() => parseUri(bad), bad).toThrow(/not a session resource/);
    }
  });
});

describe("notices", () => {
  it("a permission request is a warning with the tool and its input", () => {
    const n = noticeOf(
      change(
        "busy",
        "waiting_for_permission",
        { pending_permission: { tool_name: "Bash", tool_input: { command: "ls" }, seq: 3 } },
        [{ hook_event_name: "PermissionRequest" }],
      ),
    );
    expect(n).toEqual({
      level: "warning",
      notice: {
        event: "permission",
        session_id: "s1",
        status: "waiting_for_permission",
        previous: "busy",
        tool_name: "Bash",
        tool_input: { command: "ls" },
      },
    });
  });
  it("turn ends by outcome, failures, deaths; nothing for a replay or an unchanged status", () => {
    expect(noticeOf(change("busy", "idle", { last_turn: "completed" }))?.level).toBe("info");
    expect(noticeOf(change("busy", "idle", { last_turn: "interrupted" }))?.level).toBe("notice");
    expect(noticeOf(change("busy", "idle", { last_turn: "failed", last_error: "overloaded" }))).toMatchObject({
      level: "error",
      notice: { event: "failed", error: "overloaded" },
    });
    expect(noticeOf(change("starting", "error", { last_error: "boom" }))).toMatchObject({
      level: "error",
      notice: { event: "failed" },
    });
    expect(noticeOf(change("idle", "dead", { exit_code: 0 }))).toMatchObject({
      level: "warning",
      notice: { event: "dead", exit_code: 0 },
    });
    expect(noticeOf(change(undefined, "idle"))).toBeUndefined();
    expect(noticeOf(change("idle", "idle"))).toBeUndefined();
    expect(noticeOf(change("starting", "ready"))).toBeUndefined();
  });
  it("a turn folded whole in one change (its prompt and Stop read together) still ends with a notice; a replay does not", () => {
    const whole: LogEvent[] = [{ hook_event_name: "UserPromptSubmit" }, { hook_event_name: "Stop" }];
    expect(noticeOf(change("ready", "idle", { last_turn: "completed" }, whole))).toMatchObject({
      level: "info",
      notice: { event: "turn_ended", previous: "ready" },
    });
    expect(noticeOf(change("idle", "idle", { last_turn: "completed" }, whole))).toMatchObject({
      notice: { event: "turn_ended" },
    });
    expect(noticeOf(change(undefined, "idle", { last_turn: "completed" }, whole))).toBeUndefined();
    // A Stop that does not end the work (background tasks still running) leaves it busy: no notice.
    expect(noticeOf(change("busy", "busy", {}, [{ hook_event_name: "Stop" }]))).toBeUndefined();
  });
});

describe("audit log", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

  it("appends one 0600 line per call, rotates by size, and reads back from --since", async () => {
    dir = mkdtempSync(join(tmpdir(), "cs-audit-"));
    const a = new AuditLog(dir, 1024, quiet);
    for (let i = 0; i < 30; i++)
      void a.append({
        time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
        tool: "send_message",
        actor: "cli:test",
        session_id: `s${i}`,
        outcome: "ok",
        duration_ms: i,
      });
    await a.append({
      time: new Date(Date.UTC(2026, 0, 1, 1)).toISOString(),
      tool: "kill_session",
      actor: "server:idle_ttl",
      outcome: "error",
      error_code: "SESSION_NOT_FOUND",
      duration_ms: 1,
    });
    expect(statSync(join(dir, "audit.jsonl")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "audit.jsonl.1")).size).toBeGreaterThanOrEqual(1024);
    expect(
      readFileSync(join(dir, "audit.jsonl"), "utf8")
        .trim()
        .split("\n")
        .every((l) => JSON.parse(l)),
    ).toBe(true);
    const all = await readAudit(dir);
    expect(all.at(-1)).toMatchObject({ tool: "kill_session", error_code: "SESSION_NOT_FOUND" });
    const late = await readAudit(dir, new Date(Date.UTC(2026, 0, 1, 0, 29)));
    expect(late.map((l) => l.session_id ?? l.tool)).toEqual(["s29", "kill_session"]);
  });

  it("keeps only well-formed session ids; --since takes dates and durations", () => {
    expect(sessionOf({ session_id: "abc" }, undefined)).toBe("abc");
    expect(sessionOf({ cwd: "/x" }, { session_id: "new1" })).toBe("new1");
    expect(sessionOf({ session_id: "a b; rm -rf" }, undefined)).toBeUndefined();
    expect(parseSince("2h", 10_000_000)?.getTime()).toBe(10_000_000 - 7_200_000);
    expect(parseSince("2026-01-01T00:00:00Z")?.toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(parseSince("soon")).toBeUndefined();
  });
});

describe("settings", () => {
  it("time limits default on and accept 0 (off); get_config redacts secret-looking keys", () => {
    const d = loadConfig({ HOME: "/tmp/h" });
    expect(d).toMatchObject({
      idleTtlMs: 6 * 3_600_000,
      busyMaxMs: 2 * 3_600_000,
      retainDeadMs: 7 * 86_400_000,
      allowConfigure: false,
      allowSensitive: false,
    });
    expect(loadConfig({ HOME: "/tmp/h", CLAUDE_SESSIONS_IDLE_TTL_MS: "0" }).idleTtlMs).toBe(0);
    expect(() => loadConfig({ HOME: "/tmp/h", CLAUDE_SESSIONS_BUSY_MAX_MS: "-5" })).toThrow(/CLAUDE_SESSIONS_BUSY_MAX_MS/);
    const shown = effectiveConfig({ ...d, ...{ dopplerToken: "dp.st.x" } });
    expect(shown.dopplerToken).toBe("[redacted]");
    expect(shown.idleTtlMs).toBe(6 * 3_600_000);
  });
});

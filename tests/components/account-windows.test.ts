/**
 * Issue 33, an account's usage windows: the status line command a session under an account runs (real sh, fed what
 * CLI 2.1.332 gave its status line against the mock's MOCK_USAGE headers) keeps the input that carries `rate_limits`
 * in the account's file and ignores the rest; a headless session's rate_limit_event lands in the same file; the
 * windows read back in percent with ISO resets, and `claude-sessions accounts`' line shows them.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  accountsView,
  ensureWindowsDir,
  noteRateLimitEvent,
  readWindows,
  statusLineCommand,
  windowsFile,
} from "../../src/claude/account-windows.js";
import { roomLine } from "../../src/claude/accounts.js";

const root = mkdtempSync(join(tmpdir(), "cs-windows-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A status line input as 2.1.332 sent it (measured: `rate_limits` after a plan login's answer with the unified headers). */
const STATUS = {
  session_id: "99e7a9d9-8bd7-402b-b472-49cdacf8ce06",
  cwd: "/tmp/x",
  model: { id: "claude-sonnet-5-5", display_name: "Sonnet 5.5" },
  version: "2.1.332",
  rate_limits: {
    five_hour: { used_percentage: 42, resets_at: 1795824280 },
    seven_day: { used_percentage: 17, resets_at: 1796079880 },
  },
};

function statusLine(file: string, input: string): string {
  return execFileSync("/bin/sh", ["-c", statusLineCommand(file)], { input, encoding: "utf8" });
}

describe("an account's usage windows", () => {
  it("the status line command keeps an input with rate_limits, ignores one without, prints nothing", () => {
    const state = join(root, "state with 'quote");
    ensureWindowsDir(state);
    const file = windowsFile(state, "work")!;
    expect(statusLine(file, JSON.stringify(STATUS))).toBe("");
    expect(readWindows(state, "work")).toEqual({
      five_hour: { used_percent: 42, resets_at: new Date(1795824280_000).toISOString() },
      seven_day: { used_percent: 17, resets_at: new Date(1796079880_000).toISOString() },
      as_of: statSync(file).mtime.toISOString(),
    });
    // An input before any answer (no rate_limits) leaves the figures as they were.
    statusLine(file, JSON.stringify({ ...STATUS, rate_limits: undefined }));
    expect(readWindows(state, "work")?.five_hour?.used_percent).toBe(42);
    expect(JSON.parse(readFileSync(file, "utf8")).rate_limits.seven_day.used_percentage).toBe(17);
  });

  it("a headless rate_limit_event's figures (0..1) merge into the same file; events without figures change nothing", () => {
    const state = join(root, "headless");
    ensureWindowsDir(state);
    const file = windowsFile(state, "h")!;
    noteRateLimitEvent(file, { rateLimitType: "five_hour", utilization: 0.5, resetsAt: 1795824280 });
    noteRateLimitEvent(file, { unifiedWindows: { seven_day: { utilization: 0.25, resetsAt: 1796079880 } } });
    noteRateLimitEvent(file, { rateLimitType: "five_hour" });
    const w = readWindows(state, "h")!;
    expect(w.five_hour).toEqual({ used_percent: 50, resets_at: new Date(1795824280_000).toISOString() });
    expect(w.seven_day).toEqual({ used_percent: 25, resets_at: new Date(1796079880_000).toISOString() });
  });

  it("no file, a broken file or a name that is no account's: no figures", () => {
    const state = join(root, "none");
    ensureWindowsDir(state);
    expect(readWindows(state, "nobody")).toBeUndefined();
    writeFileSync(windowsFile(state, "broken")!, "{not json");
    expect(readWindows(state, "broken")).toBeUndefined();
    expect(windowsFile(state, "../x")).toBeUndefined();
    expect(windowsFile(state, "auto")).toBeUndefined();
  });

  it("the accounts' view and line show each account's windows", () => {
    const state = join(root, "view");
    ensureWindowsDir(state);
    statusLine(windowsFile(state, "work")!, JSON.stringify(STATUS));
    const accounts = join(root, "accounts.json");
    writeFileSync(accounts, JSON.stringify({ accounts: { work: { config_dir: "/x" }, key: { api_key_env: "K" } } }), {
      mode: 0o600,
    });
    const v = accountsView(accounts, state, [{ session_id: "s1", account: "work" }]);
    expect(v.accounts.map((a) => [a.name, a.sessions, a.windows?.five_hour?.used_percent])).toEqual([
      ["work", ["s1"], 42],
      ["key", [], undefined],
    ]);
    expect(roomLine(v.accounts[0]!)).toMatch(/room\t5h 42% used \(resets .*\), 7d 17% used/);
    expect(accountsView(undefined, state, [])).toEqual({ accounts: [] });
    writeFileSync(accounts, "{", { mode: 0o600 });
    expect(accountsView(accounts, state, []).error).toMatch(/not valid JSON/);
  });
});

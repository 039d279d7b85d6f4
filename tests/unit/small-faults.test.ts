/**
 * Faults of issue #16 fixed in small pure parts: the session deadline (counted from the current process,
 * on the monotonic clock), brief error text, and hand-off files (secrets) left by a server that died.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app.js";
import { Deadline, timeLeftMs } from "../../src/sessions/deadline.js";
import { briefText } from "../../src/util/terminal-text.js";
import { removeStaleHandoffs } from "../../src/store/handoff.js";

const root = mkdtempSync(join(tmpdir(), "cs-small-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
afterEach(() => vi.restoreAllMocks());
const DAY = 86_400_000;

describe("session deadline", () => {
  it("counts from the current process's start, not the record's creation (a resumed old session is not ended at once)", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    const old = {
      created_at: "2026-11-01T00:00:00Z",
      started_at: "2026-11-01T00:00:05Z",
      process_started_at: "2026-11-23T11:00:00Z",
    };
    expect(timeLeftMs(old, DAY, now)).toBe(DAY - 3_600_000);
    expect(timeLeftMs({ created_at: "2026-11-01T00:00:00Z" }, DAY, now)).toBe(0); // no later start known: it is old
  });

  it("a start that is not a date, or in the future (clock went back), never ends a session at once", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    expect(timeLeftMs({ created_at: "yesterday" }, DAY, now)).toBe(DAY);
    expect(timeLeftMs({ created_at: "2026-11-24T12:00:00Z" }, DAY, now)).toBe(DAY);
  });

  it("runs on the monotonic clock: a wall-clock jump of a day after arming changes nothing", () => {
    // Fake timers: the wall clock (Date) and the monotonic one (performance.now) move apart, as in a real jump.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance", "Date"] });
    try {
      let fired = 0;
      const t0 = performance.now();
      const d = new Deadline(300, () => (fired = performance.now() - t0));
      vi.setSystemTime(Date.now() + DAY); // the wall clock jumps a day forward
      vi.advanceTimersByTime(100);
      expect(fired).toBe(0);
      vi.setSystemTime(Date.now() - 2 * DAY); // and back
      vi.advanceTimersByTime(199);
      expect(fired).toBe(0);
      vi.advanceTimersByTime(1);
      expect(fired).toBe(300);
      d.cancel();
    } finally {
      vi.useRealTimers();
    }
  });

  it("waits out durations longer than one timer can hold, in steps", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      let fired = false;
      const d = new Deadline(80, () => (fired = true), 15); // steps of 15 ms stand in for setTimeout's 24.8-day limit
      vi.advanceTimersByTime(35);
      expect(fired).toBe(false);
      expect(d.remainingMs()).toBe(45);
      expect(vi.getTimerCount()).toBe(1); // one step pending, never a timer longer than the step
      vi.advanceTimersByTime(45);
      expect(fired).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("brief error text", () => {
  it("keeps the last meaningful lines within 500 characters, without control sequences or box drawing", () => {
    const screen = [
      "\x1b[1mWelcome\x1b[0m",
      "╭──────╮",
      ...Array.from({ length: 60 }, (_, i) => `line ${i} ${"x".repeat(60)}`),
      "────────",
      "Error: the API key is invalid",
      "❯ ",
      "",
      "   ",
    ].join("\n");
    const b = briefText(screen);
    expect(b.length).toBeLessThanOrEqual(500);
    expect(b.split("\n").at(-1)).toBe("Error: the API key is invalid");
    expect(b).not.toMatch(/\x1b|─|╭|❯/);
    expect(briefText("y".repeat(3000)).length).toBe(500);
  });
});

describe("environment hand-off leftovers", () => {
  function session(state: string, id: string, files: Record<string, number>): void {
    mkdirSync(join(state, id), { recursive: true });
    for (const [name, ageMs] of Object.entries(files)) {
      const p = join(state, id, name);
      writeFileSync(p, "SECRET=1\0", { mode: 0o600 });
      const t = (Date.now() - ageMs) / 1000;
      utimesSync(p, t, t);
    }
  }

  it("removes old ones and those of sessions not starting; keeps a young one a launcher may be reading, and other files", async () => {
    const state = join(root, "s1");
    session(state, "starting1", { "env.a": 60_000, "handoff.b": 500, "events.jsonl": 60_000 });
    session(state, "idle1", { "env.c": 500, "handoff.d": 500 });
    const removed = await removeStaleHandoffs(state, (id) => id === "starting1");
    expect(removed.map((p) => p.slice(state.length + 1)).sort()).toEqual(["idle1/env.c", "idle1/handoff.d", "starting1/env.a"]);
    expect(readdirSync(join(state, "starting1")).sort()).toEqual(["events.jsonl", "handoff.b"]);
  });

  it("a server starting up removes them (nothing of the secret is left on disk)", async () => {
    const state = join(root, "s2");
    session(state, "gone1", { "env.x": 60_000, "handoff.y": 0 });
    const app = await createApp({
      PATH: process.env.PATH ?? "",
      HOME: join(root, "home"),
      CLAUDE_SESSIONS_DIR: state,
      CLAUDE_SESSIONS_TMUX_SOCKET: `cs-test-small-${process.pid}`,
      CLAUDE_SESSIONS_LOG_LEVEL: "error",
    });
    await app.close();
    expect(existsSync(join(state, "gone1", "env.x"))).toBe(false);
    expect(existsSync(join(state, "gone1", "handoff.y"))).toBe(false);
  });
});

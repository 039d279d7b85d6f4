/**
 * The in-process writer of a headless session's events (src/events/appender.ts, issue 38): the turn's hook events
 * reach the server through the Agent SDK's callbacks and are written here, beside hook commands that write the same
 * log (SessionStart, SessionEnd, the sandbox's reports, another server's lines). What a reader of the log must find:
 * every event once, whole, in the order given, and nothing written while another writer or a compaction holds the lock.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EventAppender } from "../../src/events/appender.js";
import { hookWrite, readLog } from "../helpers/events-log.js";
import { acquireFileLock } from "../../src/util/proc/flock.js";

const root = mkdtempSync(join(tmpdir(), "cs-app-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
let n = 0;
const fresh = () => {
  const p = join(root, `events-${++n}.jsonl`);
  writeFileSync(p, "");
  return p;
};

describe("EventAppender", () => {
  it("beside a hook command writing large lines to the same log: every event once, whole, the appender's in order", async () => {
    const path = fresh();
    const errors: unknown[] = [];
    const a = new EventAppender(path, (e) => errors.push(e));
    // Lines over a pipe's and paste's buffers (64 KiB, 4 KiB), so that a writer without the lock would tear them.
    const big = (i: number) => "x".repeat(i % 3 === 0 ? 200_000 : 100);
    const hooks: Array<Promise<number | null>> = [];
    for (let i = 0; i < 60; i++) {
      a.push({ hook_event_name: "PreToolUse", tool_input: { i, pad: big(i) } });
      if (i % 4 === 0)
        hooks.push(
          hookWrite(path, JSON.stringify({ hook_event_name: "Notification", message: `hook ${i}`, pad: "y".repeat(150_000) })),
        );
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    a.push({ hook_event_name: "Stop", last_assistant_message: "done" });
    await a.flush();
    expect(await Promise.all(hooks)).toEqual(hooks.map(() => 0));
    const { events, problems } = await readLog(path);
    expect(problems).toEqual([]);
    expect(errors).toEqual([]);
    const mine = events.filter((e) => e.hook_event_name !== "Notification");
    expect(mine.map((e) => (e.tool_input as { i?: number } | undefined)?.i ?? e.hook_event_name)).toEqual([
      ...Array.from({ length: 60 }, (_, i) => i),
      "Stop",
    ]);
    expect(mine.every((e) => e.hook_event_name === "Stop" || (e.tool_input as { pad: string }).pad.length > 0)).toBe(true);
    expect(events.filter((e) => e.hook_event_name === "Notification")).toHaveLength(hooks.length);
  });

  it("writes nothing while another holds the log's lock (a compaction, a hook), then everything, in order", async () => {
    const path = fresh();
    const held = await acquireFileLock(`${path}.lock`, { timeoutMs: 5000 });
    const a = new EventAppender(path);
    a.push({ hook_event_name: "UserPromptSubmit", prompt: "one" });
    a.push({ hook_event_name: "Stop", last_assistant_message: "two" });
    await new Promise((r) => setTimeout(r, 400));
    expect(readFileSync(path, "utf8")).toBe("");
    await held.release();
    await a.flush();
    expect((await readLog(path)).events.map((e) => e.hook_event_name)).toEqual(["UserPromptSubmit", "Stop"]);
  });

  it("a log whose folder is gone: the failure is reported, flush still resolves, later events are written again", async () => {
    const errors: unknown[] = [];
    const gone = new EventAppender(join(root, "no-such-dir", "events.jsonl"), (e) => errors.push(e));
    gone.push({ hook_event_name: "Stop" });
    await gone.flush();
    expect(errors.length).toBeGreaterThan(0);
    const path = fresh();
    const a = new EventAppender(path);
    a.push({ hook_event_name: "Stop", last_assistant_message: "x" });
    await a.flush();
    expect(readFileSync(path, "utf8")).toBe(`\n${JSON.stringify({ hook_event_name: "Stop", last_assistant_message: "x" })}\n`);
  });
});

/**
 * The server's own writes to an events log (src/events/appender.ts): `flock … cat` with the log as its stdout, beside
 * the hook command that writes the same log under the same lock. What a reader of the log must find: every event
 * once and whole, the server's in the order it wrote them, and nothing written while another writer or a compaction
 * holds the lock.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockedAppend } from "../../src/events/appender.js";
import { appendEvent } from "../../src/events/eventlog.js";
import { hookWrite, readLog } from "../helpers/events-log.js";
import { acquireFileLock, LockTimeoutError } from "../../src/util/proc/flock.js";

const root = mkdtempSync(join(tmpdir(), "cs-lap-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
let n = 0;
const fresh = () => {
  const p = join(root, `events-${++n}.jsonl`);
  writeFileSync(p, "");
  return p;
};
const line = (ev: object) => `\n${JSON.stringify(ev)}\n`;

describe("lockedAppend", () => {
  it("beside hook commands writing large lines to the same log at once: every line once and whole", async () => {
    const path = fresh();
    // Lines over a pipe's and paste's buffers (64 KiB, 4 KiB): a writer without the lock would tear them.
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 24; i++) {
      writes.push(
        lockedAppend(path, line({ hook_event_name: "PreToolUse", tool_input: { i, pad: "x".repeat(i % 3 ? 100 : 200_000) } })),
      );
      if (i % 2 === 0)
        writes.push(
          hookWrite(path, JSON.stringify({ hook_event_name: "Notification", message: `hook ${i}`, pad: "y".repeat(150_000) })),
        );
    }
    await Promise.all(writes);
    const { events, problems } = await readLog(path);
    expect(problems).toEqual([]);
    const ours = events.filter((e) => e.hook_event_name === "PreToolUse").map((e) => (e.tool_input as { i: number }).i);
    expect([...ours].sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(events.filter((e) => e.hook_event_name === "Notification")).toHaveLength(12);
  });

  it("appendEvent: one after another, in order, each a line of its own after a torn one; the files the owner's alone", async () => {
    const path = join(root, `new-${++n}.jsonl`);
    await appendEvent(path, { hook_event_name: "cs:spawn" });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}.lock`).mode & 0o777).toBe(0o600);
    appendFileSync(path, '{"hook_event_name":"PreToolUse","tool_na'); // a writer killed half-way
    for (const name of ["cs:interrupted", "cs:exit"] as const) await appendEvent(path, { hook_event_name: name });
    expect((await readLog(path)).events.map((e) => e.hook_event_name)).toEqual(["cs:spawn", "cs:interrupted", "cs:exit"]);
  });

  it("writes nothing while another holds the log's lock (a compaction, a hook), then the line", async () => {
    const path = fresh();
    const held = await acquireFileLock(`${path}.lock`, { timeoutMs: 5000 });
    let done = false;
    const w = lockedAppend(path, line({ hook_event_name: "Stop", last_assistant_message: "two" })).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(done).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("");
    await held.release();
    await w;
    expect((await readLog(path)).events.map((e) => e.hook_event_name)).toEqual(["Stop"]);
  });

  it("a log whose folder is gone: a plain error (not a lock timeout), nothing made", async () => {
    const gone = join(root, "no-such-dir", "events.jsonl");
    const e = await lockedAppend(gone, line({ hook_event_name: "Stop" })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(LockTimeoutError);
  });
});

/** Readers of files that another process is still appending to never break a character or a line. */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EventTail } from "../../src/events/eventlog.js";
import type { LogEvent } from "../../src/events/reducer.js";
import { readFrom, readTail, utf8Complete } from "../../src/util/fs/files.js";

const dir = mkdtempSync(join(tmpdir(), "cs-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

describe("reading a growing file", () => {
  it("utf8Complete stops before a character cut in half", () => {
    const b = Buffer.from("a€🙂", "utf8"); // 1 + 3 + 4 bytes
    expect(utf8Complete(b)).toBe(8);
    for (let cut = 1; cut < 8; cut++) {
      const n = utf8Complete(b.subarray(0, cut));
      expect([1, 4, 8]).toContain(n);
      expect(b.subarray(0, n).toString("utf8")).not.toContain("\uFFFD");
    }
  });

  it("readFrom never returns a broken character, and the cursor continues exactly", async () => {
    const f = join(dir, "log");
    const whole = Buffer.from("héllo wörld 🙂 end", "utf8");
    writeFileSync(f, whole.subarray(0, 14)); // inside the emoji
    const a = await readFrom(f, 0);
    expect(a.text).not.toContain("\uFFFD");
    appendFileSync(f, whole.subarray(14));
    const b = await readFrom(f, a.end);
    expect(a.text + b.text).toBe(whole.toString("utf8"));
    const l = await readFrom(f, 0, { upTo: "line" });
    expect(l).toMatchObject({ text: "", end: 0 });
    const t = await readTail(f, 6);
    expect(t.text).not.toContain("\uFFFD");
  });

  it("EventTail folds a line only when it is whole, however the bytes arrive", async () => {
    const f = join(dir, "events.jsonl");
    writeFileSync(f, "");
    const seen: LogEvent[] = [];
    const tail = new EventTail(f, (evs) => seen.push(...evs));
    await tail.start();
    const line = Buffer.from(JSON.stringify({ hook_event_name: "Stop", last_assistant_message: "grüße 🙂 done" }) + "\n", "utf8");
    const cut = line.indexOf(Buffer.from("🙂")) + 2;
    appendFileSync(f, line.subarray(0, cut));
    await tail.poke();
    expect(seen).toEqual([]);
    appendFileSync(f, line.subarray(cut));
    await tail.poke();
    tail.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.last_assistant_message).toBe("grüße 🙂 done");
  });
});

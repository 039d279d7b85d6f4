/**
 * Compaction of an events log (src/events/compact.ts): the fold survives as a snapshot, the old content goes to
 * events.jsonl.1, and a writer that opened the file before (as a hook waiting on the lock has) still lands.
 */
import {
  closeSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
  mkdtempSync,
  rmSync,
  appendFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compactIfLarge } from "../../src/events/compact.js";
import { LiveSession } from "../../src/events/live.js";

let root: string;
beforeEach(() => (root = mkdtempSync(join(tmpdir(), "cs-compact-"))));
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

const line = (ev: Record<string, unknown>) => `\n${JSON.stringify(ev)}\n`;

describe("events log compaction", () => {
  it("keeps the fold (a fresh replay agrees), archives the old content, and loses no late writer", async () => {
    const path = join(root, "events.jsonl");
    writeFileSync(path, line({ hook_event_name: "cs:spawn", generation: 1 }) + line({ hook_event_name: "SessionStart" }));
    for (let i = 0; i < 40; i++)
      appendFileSync(
        path,
        line({ hook_event_name: "UserPromptSubmit", prompt: `p${i} ${"x".repeat(200)}` }) +
          line({ hook_event_name: "Stop", last_assistant_message: `r${i}` }),
      );
    const s = new LiveSession(
      "t",
      path,
      () => {},
      () => {},
    );
    await s.start();
    expect(s.fold).toMatchObject({ status: "idle", turn_count: 40, responses: 40 });
    const before = statSync(path).size;
    // A hook that opened the log (O_APPEND) before the compaction and writes after it.
    const late = openSync(path, "a");
    expect(await compactIfLarge(s, 4096)).toBe(true);
    writeSync(
      late,
      line({ hook_event_name: "UserPromptSubmit", prompt: "after" }) +
        line({ hook_event_name: "Stop", last_assistant_message: "late" }),
    );
    closeSync(late);
    await s.refresh();
    expect(s.fold).toMatchObject({ status: "idle", turn_count: 41, responses: 41, last_response: "late", generation: 1 });
    expect(statSync(path).size).toBeLessThan(before / 4);
    expect(readFileSync(`${path}.1`, "utf8")).toContain("p39 ");
    expect(readFileSync(path, "utf8").trim().split("\n")[0]).toContain('"hook_event_name":"cs:snapshot"');
    // Another server replaying the compacted log reaches the same state.
    const fresh = new LiveSession(
      "t",
      path,
      () => {},
      () => {},
    );
    await fresh.start();
    expect({ ...fresh.fold, last_event_at: undefined }).toEqual({ ...s.fold, last_event_at: undefined });
    fresh.close();
    s.close();
  });

  it("leaves a log alone while a turn runs or while it is small", async () => {
    const path = join(root, "events.jsonl");
    writeFileSync(
      path,
      line({ hook_event_name: "cs:spawn" }) +
        line({ hook_event_name: "SessionStart" }) +
        line({ hook_event_name: "UserPromptSubmit", prompt: "x".repeat(9000) }),
    );
    const s = new LiveSession(
      "t",
      path,
      () => {},
      () => {},
    );
    await s.start();
    expect(s.fold.status).toBe("busy");
    expect(await compactIfLarge(s, 4096)).toBe(false);
    expect(await compactIfLarge(s, 1 << 20)).toBe(false);
    s.close();
  });
});

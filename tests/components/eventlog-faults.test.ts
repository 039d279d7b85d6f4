/**
 * The events log under the faults of issue #16: a writer killed mid-line (a torn line must not swallow
 * the next event, whatever wrote it), an event larger than the read cap (the turn must still end), and
 * exits of an older spawn generation (they must not kill the new process's status).
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hookCommand } from "../../src/claude/hooks.js";
import { installScripts } from "../../src/app.js";
import { EventTail, parseLogLine } from "../../src/events/eventlog.js";
import { foldAll, type LogEvent } from "../../src/events/reducer.js";

const root = mkdtempSync(join(tmpdir(), "cs-evf-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
let n = 0;
const fresh = () => join(root, `events-${++n}.jsonl`);

function sh(command: string, input: string): Promise<number | null> {
  return new Promise((resolve) => {
    const c = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "ignore", "ignore"] });
    c.on("close", resolve);
    c.stdin.end(input);
  });
}

/** Every event in the file, read the way a server reads it (EventTail, with an optional line cap). */
const reported: string[] = [];
async function readAll(path: string, maxLineBytes?: number): Promise<LogEvent[]> {
  const got: LogEvent[] = [];
  const t = new EventTail(
    path,
    (evs) => got.push(...evs),
    (e) => void reported.push(String(e)),
    maxLineBytes ? { maxLineBytes } : {},
  );
  await t.start();
  t.close();
  return got;
}

const stop = JSON.stringify({ session_id: "c1", hook_event_name: "Stop", last_assistant_message: "done" });

describe("events log faults", () => {
  it("a hook killed half-way through its line does not swallow the next event (the settings' hook command)", async () => {
    const events = fresh();
    writeFileSync(events, "");
    appendFileSync(events, '{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"hal'); // torn: no newline
    expect(await sh(hookCommand(events), stop)).toBe(0);
    expect(readFileSync(events, "utf8").split("\n")).toContain(stop); // the writer's part: a line of its own
    expect((await readAll(events)).map((e) => e.hook_event_name)).toEqual(["Stop"]);
  });

  it("hook.sh, both forms, starts its record on a fresh line too", async () => {
    const { hook } = await installScripts(join(root, "state"));
    const events = fresh();
    writeFileSync(events, '{"hook_event_name":"PreToolUse","tool_na');
    expect(await sh(`'${hook}' '${events}'`, stop)).toBe(0);
    appendFileSync(events, '{"hook_event_name":"PostToo');
    expect(await sh(`'${hook}' '${events}' exit 3 7`, "")).toBe(0);
    expect(await readAll(events)).toEqual([
      expect.objectContaining({ hook_event_name: "Stop" }),
      expect.objectContaining({ hook_event_name: "cs:exit", exit_code: 3, generation: 7 }),
    ]);
  });

  it("a torn line from a writer without the leading newline (a session started by an older server) is resynchronised", async () => {
    const events = fresh();
    writeFileSync(events, '{"session_id":"c1","hook_event_name":"PreToolUse","tool_input":{"command":"ls' + stop + "\n");
    expect((await readAll(events)).map((e) => e.hook_event_name)).toEqual(["Stop"]);
    expect(parseLogLine('{  "a": {"b": 1}, "hook_event_name": "Stop"}')).toMatchObject({ hook_event_name: "Stop" });
    expect(parseLogLine('{"tool_input":{"x":1}}')).toBeUndefined();
  });

  it("an event longer than the line cap still ends the turn: a minimal event of the same name is read", async () => {
    const events = fresh();
    const big = JSON.stringify({ session_id: "c1", hook_event_name: "Stop", last_assistant_message: "x".repeat(200_000) });
    const bigLater = JSON.stringify({
      session_id: "c1",
      last_assistant_message: "y".repeat(200_000),
      hook_event_name: "PostToolUse",
    });
    writeFileSync(
      events,
      [JSON.stringify({ hook_event_name: "UserPromptSubmit", prompt: "p" }), big, bigLater, stop].join("\n") + "\n",
    );
    const got = await readAll(events, 64 * 1024);
    expect(got.map((e) => e.hook_event_name)).toEqual(["UserPromptSubmit", "Stop", "PostToolUse", "Stop"]);
    expect(got[1]).toMatchObject({ hook_event_name: "Stop", oversized: true, session_id: "c1" });
    expect(got[1]!.last_assistant_message).toBeUndefined();
    expect(reported.join("\n")).toMatch(/an event line of 2000\d\d bytes \(over 65536\).*read as a bare Stop/);
  });

  it("an oversized line still being written is not reported until it ends", async () => {
    const events = fresh();
    writeFileSync(
      events,
      JSON.stringify({ hook_event_name: "Stop", last_assistant_message: "x".repeat(100_000) }).slice(0, 90_000),
    );
    const got: LogEvent[] = [];
    const t = new EventTail(
      events,
      (evs) => got.push(...evs),
      () => {},
      { maxLineBytes: 16 * 1024 },
    );
    await t.start();
    expect(got).toEqual([]);
    appendFileSync(events, '"}\n' + stop + "\n");
    await t.poke();
    t.close();
    expect(got.map((e) => e.hook_event_name)).toEqual(["Stop", "Stop"]);
  });
});

describe("spawn generations", () => {
  it("an exit of an older generation does not mark the new process dead", () => {
    const f = foldAll([
      { hook_event_name: "cs:spawn", generation: 1 },
      { hook_event_name: "SessionStart" },
      { hook_event_name: "cs:spawn", generation: 2 },
      { hook_event_name: "SessionStart" },
      { hook_event_name: "cs:exit", exit_code: 0, generation: 1 }, // the old process's late exit
    ]);
    expect(f).toMatchObject({ status: "ready", generation: 2 });
    expect(f.exit_code).toBeUndefined();
    const g = foldAll([{ hook_event_name: "cs:exit", exit_code: 9, generation: 2 }], f);
    expect(g).toMatchObject({ status: "dead", exit_code: 9 });
    // An exit without a generation (an older server's launcher or pane hook) still counts.
    expect(foldAll([{ hook_event_name: "cs:exit", exit_code: 1 }], f).status).toBe("dead");
  });
});

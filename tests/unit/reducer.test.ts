import { describe, expect, it } from "vitest";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventTail } from "../../src/events/eventlog.js";
import { foldAll, initialFold, parseEventLine, reduce, type LogEvent } from "../../src/events/reducer.js";
import { canMove, STATUSES } from "../../src/core/status.js";

const ev = (hook_event_name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({
  hook_event_name,
  ...extra,
});

describe("status reducer", () => {
  it("follows a whole turn: starting → ready → busy → idle", () => {
    const f = foldAll([
      ev("cs:spawn", { claude_session_id: "c1" }),
      ev("SessionStart", { source: "startup", session_id: "c1" }),
      ev("UserPromptSubmit", { prompt: "hi", session_id: "c1" }),
      ev("Stop", { last_assistant_message: "hello" }),
    ]);
    expect(f).toMatchObject({
      status: "idle",
      turn_count: 1,
      prompts_submitted: 1,
      last_prompt: "hi",
      last_response: "hello",
      last_turn: "completed",
      claude_session_id: "c1",
    });
  });

  it("keeps the ended turn's prompt id from Stop, not from UserPromptSubmit (a queued prompt's fires with the running turn's id)", () => {
    // The real CLI 2.1.330, a prompt queued during a turn: both UserPromptSubmits carry the first prompt's id.
    let f = foldAll([
      ev("cs:spawn"),
      ev("SessionStart"),
      ev("UserPromptSubmit", { prompt: "long", prompt_id: "p1" }),
      ev("UserPromptSubmit", { prompt: "queued", prompt_id: "p1" }),
    ]);
    f = reduce(f, ev("Stop", { prompt_id: "p1" }));
    expect(f.turn_prompt_id).toBe("p1");
    f = reduce(f, ev("Stop", { prompt_id: "p2" }));
    expect(f).toMatchObject({ turn_count: 2, turn_prompt_id: "p2" });
    f = foldAll([ev("UserPromptSubmit", { prompt_id: "p3" }), ev("StopFailure", { prompt_id: "p3", error: "unknown" })], f);
    expect(f.turn_prompt_id).toBe("p3");
    // An end that does not say its prompt (an interrupt) leaves no id to match.
    f = foldAll([ev("UserPromptSubmit", { prompt_id: "p4" }), ev("cs:interrupted")], f);
    expect(f.turn_prompt_id).toBeUndefined();
  });

  it("a UserPromptSubmit that lands after its own turn's Stop is counted and does not reopen the turn (issue 38)", () => {
    const start = [ev("cs:spawn"), ev("SessionStart")];
    // Its hook runs in the background; should the turn's events have waited for its line in vain, it comes last.
    let f = foldAll([...start, ev("Stop", { prompt_id: "p1", last_assistant_message: "done" })]);
    f = reduce(f, ev("UserPromptSubmit", { prompt: "hi", prompt_id: "p1" }));
    expect(f).toMatchObject({ status: "idle", turn_count: 1, prompts_submitted: 1, last_prompt: "hi", last_response: "done" });
    // The same events in their order end in the same place.
    const inOrder = foldAll([
      ...start,
      ev("UserPromptSubmit", { prompt: "hi", prompt_id: "p1" }),
      ev("Stop", { prompt_id: "p1", last_assistant_message: "done" }),
    ]);
    expect({ ...f, seq: 0 }).toEqual({ ...inOrder, seq: 0 });
    // A prompt the CLI queued during that turn fires with the turn's id (2.1.330): after the Stop it starts a turn.
    f = reduce(f, ev("UserPromptSubmit", { prompt: "queued", prompt_id: "p1" }));
    expect(f).toMatchObject({ status: "busy", turn_count: 1, prompts_submitted: 2 });
  });

  it("a permission request waits, and the tool running again clears it", () => {
    let f = foldAll([
      ev("cs:spawn"),
      ev("SessionStart"),
      ev("UserPromptSubmit", { prompt: "x" }),
      ev("PreToolUse", { tool_name: "Bash" }),
    ]);
    f = reduce(f, ev("PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } }));
    expect(f.status).toBe("waiting_for_permission");
    expect(f.pending_permission).toMatchObject({ tool_name: "Bash", tool_input: { command: "ls" } });
    f = reduce(f, ev("PostToolUse", { tool_name: "Bash" }));
    expect(f.status).toBe("busy");
    expect(f.pending_permission).toBeUndefined();
  });

  it("cs:turn_failed (headless: an error result with no hook) ends an open turn as failed, and only an open one", () => {
    let f = foldAll([
      ev("cs:spawn"),
      ev("SessionStart"),
      ev("UserPromptSubmit"),
      ev("cs:turn_failed", { message: "Reached maximum number of turns (1)" }),
    ]);
    expect(f).toMatchObject({
      status: "idle",
      last_turn: "failed",
      last_error: "Reached maximum number of turns (1)",
      turn_count: 1,
      prompts_submitted: 1,
    });
    f = reduce(f, ev("cs:turn_failed", { message: "late" }));
    expect(f).toMatchObject({ turn_count: 1, last_error: "Reached maximum number of turns (1)" });
  });

  it("StopFailure ends the turn as failed with the API's message; the next prompt works", () => {
    let f = foldAll([
      ev("cs:spawn"),
      ev("SessionStart"),
      ev("UserPromptSubmit"),
      ev("StopFailure", { error: "unknown", last_assistant_message: "API Error: 500 boom" }),
    ]);
    expect(f).toMatchObject({ status: "idle", last_turn: "failed", last_error: "API Error: 500 boom", turn_count: 1 });
    f = foldAll([ev("UserPromptSubmit"), ev("Stop", { last_assistant_message: "ok" })], f);
    expect(f).toMatchObject({ status: "idle", last_turn: "completed", turn_count: 2 });
    expect(f.last_error).toBeUndefined();
  });

  it("a StopFailure that lands after the headless engine recorded the failure (cs:turn_failed) ends nothing more", () => {
    let f = foldAll([ev("cs:spawn"), ev("SessionStart"), ev("UserPromptSubmit"), ev("cs:turn_failed", { message: "400" })]);
    expect(f).toMatchObject({ status: "idle", last_turn: "failed", turn_count: 1, prompts_submitted: 1 });
    // Late, after the next prompt's submission was even written: the next turn stays open and is counted once.
    f = foldAll([ev("StopFailure", { error: "invalid_request" }), ev("UserPromptSubmit")], f);
    expect(f).toMatchObject({ status: "busy", turn_count: 1, prompts_submitted: 2 });
    f = foldAll([ev("cs:interrupted")], f);
    expect(f).toMatchObject({ status: "idle", last_turn: "interrupted", turn_count: 2 });
  });

  it("an interrupt (no Stop) ends the turn; exit and SessionEnd are final until a new spawn", () => {
    let f = foldAll([ev("cs:spawn"), ev("SessionStart"), ev("UserPromptSubmit"), ev("cs:interrupted")]);
    expect(f).toMatchObject({ status: "idle", last_turn: "interrupted", turn_count: 1 });
    f = reduce(f, ev("SessionEnd", { reason: "other" }));
    expect(f.status).toBe("dead");
    f = reduce(f, ev("UserPromptSubmit"));
    expect(f.status).toBe("dead"); // stray events cannot revive a dead session
    f = reduce(f, ev("cs:exit", { exit_code: 143 }));
    expect(f).toMatchObject({ status: "dead", exit_code: 143, end_reason: "other" });
    f = foldAll([ev("cs:spawn", { claude_session_id: "c2" }), ev("SessionStart", { source: "resume", session_id: "c1" })], f);
    expect(f).toMatchObject({ status: "ready", claude_session_id: "c2", turn_count: 1 });
  });

  it("a fork's SessionStart reports the parent id; the new id comes from cs:spawn and UserPromptSubmit", () => {
    const f = foldAll([
      ev("cs:spawn", { claude_session_id: "new" }),
      ev("SessionStart", { session_id: "old", source: "resume" }),
      ev("UserPromptSubmit", { session_id: "new" }),
    ]);
    expect(f.claude_session_id).toBe("new");
  });

  it("/clear (real CLI 2.1.330: SessionEnd reason clear, then SessionStart source clear with the new id) keeps the session alive on the new id", () => {
    const f = foldAll([
      ev("cs:spawn", { claude_session_id: "c1" }),
      ev("SessionStart", { source: "startup", session_id: "c1" }),
      ev("UserPromptSubmit", { prompt: "x", session_id: "c1" }),
      ev("Stop", { last_assistant_message: "y" }),
      ev("SessionEnd", { reason: "clear", session_id: "c1" }),
      ev("SessionStart", { source: "clear", session_id: "c2" }),
    ]);
    expect(f).toMatchObject({
      status: "ready",
      claude_session_id: "c2",
      turn_count: 1,
      session_start: { source: "clear", seq: 5 },
    });
    // /compact: the same id, no turn; any other SessionEnd still ends the session.
    const g = reduce(f, ev("SessionStart", { source: "compact", session_id: "c2" }));
    expect(g).toMatchObject({ claude_session_id: "c2", turn_count: 1, session_start: { source: "compact", seq: 6 } });
    expect(reduce(g, ev("SessionEnd", { reason: "other" })).status).toBe("dead");
  });

  it("a crash while starting is dead; the orchestrator's start_failed makes it error", () => {
    let f = foldAll([ev("cs:spawn"), ev("cs:exit", { exit_code: 1 })]);
    expect(f.status).toBe("dead");
    f = reduce(f, ev("cs:start_failed", { message: "boom" }));
    expect(f).toMatchObject({ status: "error", last_error: "boom" });
  });

  it("replaying the same log gives the same state: folded in random chunks through a tail, or in one replay", async () => {
    const log = [
      ev("cs:spawn"),
      ev("SessionStart"),
      ev("UserPromptSubmit", { prompt: "a" }),
      ev("PermissionRequest", { tool_name: "Write" }),
      ev("PostToolUse"),
      ev("Stop", { last_assistant_message: "done", background_tasks: [{}] }),
      ev("UserPromptSubmit", { prompt: "b" }),
      ev("Stop", { last_assistant_message: "done" }),
      ev("cs:exit", { exit_code: 0 }),
      ev("cs:spawn", { claude_session_id: "c2" }),
      ev("SessionStart"),
      ev("UserPromptSubmit", { prompt: "c" }),
      ev("StopFailure", { error: "boom" }),
    ];
    const once = foldAll(log);
    expect(once).toMatchObject({
      status: "idle",
      turn_count: 3,
      prompts_submitted: 3,
      responses: 2,
      last_turn: "failed",
      claude_session_id: "c2",
    });
    const dir = mkdtempSync(join(tmpdir(), "cs-fold-"));
    try {
      for (let trial = 0; trial < 5; trial++) {
        const file = join(dir, `events-${trial}.jsonl`);
        writeFileSync(file, "");
        let fold = initialFold();
        const tail = new EventTail(file, (evs) => {
          for (const e of evs) fold = reduce(fold, e);
        });
        await tail.start();
        // Bytes appended in random chunks, cutting lines anywhere (a hook mid-write).
        const bytes = Buffer.from(log.map((e) => JSON.stringify(e) + "\n").join(""));
        for (let at = 0; at < bytes.length;) {
          const n = 1 + Math.floor(Math.random() * 90);
          appendFileSync(file, bytes.subarray(at, at + n));
          at += n;
          if (Math.random() < 0.5) await tail.poke();
        }
        await tail.poke();
        tail.close();
        // The tail stamps events that carry no time; everything else must be the same.
        const strip = (f: typeof fold) => ({ ...f, last_event_at: undefined });
        expect(strip(fold), `trial ${trial}`).toEqual(strip(once));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });

  it("parses lines defensively: blank, torn, foreign and unknown events are skipped", () => {
    expect(parseEventLine("")).toBeUndefined();
    expect(parseEventLine('{"hook_event_name":"Stop","last_assi')).toBeUndefined();
    expect(parseEventLine('{"hook_event_name":"SomethingNew"}')).toBeUndefined();
    expect(parseEventLine("[1,2]")).toBeUndefined();
    expect(parseEventLine('{"hook_event_name":"Stop","last_assistant_message":"x"}')).toMatchObject({ hook_event_name: "Stop" });
  });

  it("the transition table keeps dead terminal except for a new spawn (or a failed start)", () => {
    for (const s of STATUSES) expect(canMove(s, s)).toBe(true);
    expect(canMove("dead", "busy")).toBe(false);
    expect(canMove("dead", "ready")).toBe(false);
    expect(canMove("dead", "starting")).toBe(true);
    expect(canMove("busy", "idle")).toBe(true);
    expect(initialFold().status).toBe("starting");
  });
});

/**
 * Issue 33, the pure parts: what a limited turn's message says (the real CLI's messages, measured against the mock:
 * tests/fixtures/limits/payloads.json), the fold's `limit`, and whether the transcript shows the prompt answered.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { answeredIn } from "../../src/claude/answered.js";
import { loadConfig } from "../../src/config.js";
import { isLimitFailure, limitOf, resetOf } from "../../src/core/limit.js";
import { foldAll, initialFold, reduce, type LogEvent } from "../../src/events/reducer.js";

const payloads = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/limits/payloads.json"), "utf8")) as Record<
  string,
  { StopFailure: { error: string; last_assistant_message: string; prompt_id: string }; transcript_line: Record<string, unknown> }
>;
const msg = (k: string) => payloads[k]!.StopFailure.last_assistant_message;
/** The measurement's time: the 429 came at 19:58:30 UTC. */
const AT = Date.parse("2026-11-27T19:58:30Z");

describe("the limit a failed turn's message describes", () => {
  it("every measured 429 is a limit (StopFailure error rate_limit), an ordinary API error is not", () => {
    for (const [k, p] of Object.entries(payloads)) {
      expect(p.StopFailure.error, k).toBe("rate_limit");
      expect(isLimitFailure(p.StopFailure.error, p.StopFailure.last_assistant_message), k).toBe(true);
      expect(isLimitFailure(undefined, p.StopFailure.last_assistant_message), k).toBe(true);
    }
    expect(isLimitFailure("unknown", "API Error: 500 mock error 500")).toBe(false);
  });

  it("a plan's windows: kind and the reset as the end of the minute the CLI names, in its zone", () => {
    for (const v of ["2.1.197", "2.1.332"]) {
      expect(limitOf(msg(`${v}/oauth/five_hour`), AT, 60_000)).toMatchObject({
        kind: "five_hour",
        reset_known: true,
        resets_at: "2026-11-27T20:00:00.000Z",
      });
      expect(limitOf(msg(`${v}/oauth/seven_day`), AT, 60_000)).toMatchObject({
        kind: "seven_day",
        reset_known: true,
        resets_at: "2026-11-27T20:00:00.000Z",
      });
    }
    // A reset earlier in the day is tomorrow's; "8pm" without minutes; a named zone.
    expect(resetOf("You've hit your 5-hour limit · resets 3am (UTC)", AT)).toBe(Date.parse("2026-11-28T03:01:00Z"));
    expect(resetOf("You've hit your 5-hour limit · resets 8pm (UTC)", AT)).toBe(Date.parse("2026-11-27T20:01:00Z"));
    expect(resetOf("You've hit your weekly limit · resets 9pm (Europe/Paris)", AT)).toBe(Date.parse("2026-11-27T20:01:00Z"));
  });

  it("an API key's 429 names no reset: kind rate, the operator's wait from the failure", () => {
    for (const k of ["2.1.197/apikey/five_hour", "2.1.332/apikey/rate", "2.1.332/oauth/rate"]) {
      expect(limitOf(msg(k), AT, 90_000), k).toMatchObject({
        kind: "rate",
        reset_known: false,
        resets_at: new Date(AT + 90_000).toISOString(),
      });
    }
  });

  it("bad reset times are not believed: an unknown zone, a date more than 8 days ahead (with a warning)", () => {
    const unknownZone = limitOf("You've hit your 5-hour limit · resets 8pm (Mars/Olympus)", AT, 60_000);
    expect(unknownZone).toMatchObject({ kind: "five_hour", reset_known: false, resets_at: new Date(AT + 60_000).toISOString() });
    const far = limitOf("You've hit your weekly limit · resets Oct 3, 8pm (UTC)", AT, 60_000);
    expect(far.reset_known).toBe(false);
    expect(far.warning).toMatch(/more than 8 days ahead/);
    expect(Date.parse(far.resets_at)).toBe(AT + 60_000);
    const soon = limitOf("You've hit your weekly limit · resets Dec 1, 8pm (UTC)", AT, 60_000);
    expect(soon).toMatchObject({ reset_known: true, resets_at: "2026-12-01T20:01:00.000Z" });
  });
});

describe("the fold's limit", () => {
  const ev = (e: Partial<LogEvent> & Pick<LogEvent, "hook_event_name">): LogEvent => e as LogEvent;
  const started = foldAll([
    ev({ hook_event_name: "cs:spawn" }),
    ev({ hook_event_name: "SessionStart", source: "startup" }),
    ev({ hook_event_name: "UserPromptSubmit", prompt: "job", session_id: "c1" }),
  ]);

  it("StopFailure rate_limit: a failed turn with the limit; cs:limit_wait records the reset; it outlives a hibernation and a wake; the next prompt clears it", () => {
    const p = payloads["2.1.332/oauth/five_hour"]!.StopFailure;
    let f = reduce(
      started,
      ev({
        hook_event_name: "StopFailure",
        error: p.error,
        last_assistant_message: p.last_assistant_message,
        prompt_id: p.prompt_id,
      }),
    );
    expect(f.status).toBe("idle");
    expect(f.last_turn).toBe("failed");
    expect(f.limit).toMatchObject({ kind: "five_hour", prompt: "job", prompt_id: p.prompt_id, reset_known: true });
    // A hook line carries no time: the reset waits for the server's record of it.
    expect(f.limit?.resets_at).toBeUndefined();
    const seq = f.limit!.seq;
    f = reduce(f, ev({ hook_event_name: "cs:limit_wait", limit_seq: seq + 1, resets_at: "2026-11-27T20:00:00.000Z" }));
    expect(f.limit?.resets_at).toBeUndefined();
    f = reduce(
      f,
      ev({
        hook_event_name: "cs:limit_wait",
        limit_seq: seq,
        resets_at: "2026-11-27T20:00:00.000Z",
        due_at: "2026-11-27T20:00:10.000Z",
      }),
    );
    expect(f.limit).toMatchObject({ resets_at: "2026-11-27T20:00:00.000Z", wake_at: "2026-11-27T20:00:10.000Z" });
    f = reduce(f, ev({ hook_event_name: "cs:hibernated" }));
    f = reduce(f, ev({ hook_event_name: "cs:spawn" }));
    expect(f.limit?.seq).toBe(seq);
    f = reduce(f, ev({ hook_event_name: "UserPromptSubmit", prompt: "job" }));
    expect(f.limit).toBeUndefined();
  });

  it("a headless event with its time fixes the reset at once; an ordinary failure leaves no limit; cs:limit_over clears it", () => {
    let f = reduce(
      started,
      ev({
        hook_event_name: "StopFailure",
        error: "rate_limit",
        last_assistant_message: msg("2.1.332/apikey/rate"),
        ts: "2026-11-27T19:58:30.000Z",
      }),
    );
    expect(f.limit).toMatchObject({ kind: "rate", resets_at: "2026-11-27T19:59:30.000Z", reset_known: false });
    f = reduce(f, ev({ hook_event_name: "cs:limit_over" }));
    expect(f.limit).toBeUndefined();
    const plain = reduce(
      started,
      ev({ hook_event_name: "StopFailure", error: "unknown", last_assistant_message: "API Error: 500 mock error 500" }),
    );
    expect(plain.limit).toBeUndefined();
    expect(initialFold().limit).toBeUndefined();
  });
});

describe("was the limited prompt answered after all?", () => {
  const line = (o: Record<string, unknown>) => JSON.stringify(o);
  const user = line({ type: "user", promptId: "p1", message: { role: "user", content: "job" } });
  const limited = line(payloads["2.1.332/oauth/five_hour"]!.transcript_line);
  const answer = line({
    type: "assistant",
    message: { role: "assistant", model: "claude-opus-5-5", content: [{ type: "text", text: "done" }] },
  });

  it("the CLI's synthetic error line is no answer; a model's reply after the prompt is", () => {
    expect(answeredIn([user, limited].join("\n"), "p1", "job")).toBe(false);
    expect(answeredIn([user, limited, answer].join("\n"), "p1", "job")).toBe(true);
    // Found by its text when the prompt id is unknown; a reply BEFORE the prompt does not count.
    expect(answeredIn([answer, user, limited].join("\n"), undefined, "job")).toBe(false);
    expect(answeredIn([user, answer].join("\n"), undefined, "job")).toBe(true);
    expect(answeredIn("", "p1", "job")).toBe(false);
    expect(answeredIn("{torn", "p1", "job")).toBe(false);
  });
});

describe("the operator's settings", () => {
  it("defaults, values, and a bad value stops the server at start with the variable named", () => {
    const base = { HOME: "/nonexistent-home" };
    expect(loadConfig(base)).toMatchObject({
      onLimit: "wait",
      limitWakesPerMin: 6,
      limitJitterMs: 30_000,
      limitRateWaitMs: 60_000,
    });
    expect(
      loadConfig({
        ...base,
        CLAUDE_SESSIONS_ON_LIMIT: "fail",
        CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "120",
        CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0",
        CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "5000",
      }),
    ).toMatchObject({ onLimit: "fail", limitWakesPerMin: 120, limitJitterMs: 0, limitRateWaitMs: 5000 });
    expect(() => loadConfig({ ...base, CLAUDE_SESSIONS_ON_LIMIT: "switch" })).toThrow(
      /CLAUDE_SESSIONS_ON_LIMIT must be one of wait, fail/,
    );
    expect(() => loadConfig({ ...base, CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "0" })).toThrow(
      /CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN/,
    );
    expect(() => loadConfig({ ...base, CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "10" })).toThrow(/CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS/);
  });
});

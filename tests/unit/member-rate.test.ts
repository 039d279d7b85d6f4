/**
 * The member rate limit's window (sessions/teams/member-rate.ts): CLAUDE_SESSIONS_MEMBER_MESSAGES_PER_MIN prompts in any 60 s
 * per member; past it RATE_LIMITED with the wait until the oldest leaves the window, and nothing counted.
 */
import { describe, expect, it } from "vitest";
import { SessionError } from "../../src/core/errors.js";
import { MemberRate } from "../../src/sessions/teams/member-rate.js";

function refusal(f: () => void): SessionError {
  try {
    f();
  } catch (e) {
    if (e instanceof SessionError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("member rate limit", () => {
  it("allows the limit in any 60 s per member, then RATE_LIMITED with retry_after_ms until the oldest leaves", () => {
    const r = new MemberRate(() => 3);
    r.take("a", "message_teammate", 1000);
    r.take("a", "message_teammate", 2000);
    r.take("a", "handoff", 30_000);
    const e = refusal(() => r.take("a", "message_teammate", 40_000));
    expect(e.code).toBe("RATE_LIMITED");
    expect(e.retryable).toBe(true);
    expect(e.details).toEqual({ retry_after_ms: 21_000, limit_per_min: 3 });
    // Another member has its own window.
    r.take("b", "message_teammate", 40_000);
    // A refused call counted nothing: once the first leaves the window, one more goes through.
    r.take("a", "message_teammate", 61_001);
    expect(refusal(() => r.take("a", "message_teammate", 61_002)).details).toMatchObject({ retry_after_ms: 998 });
  });

  it("0 is no limit", () => {
    const r = new MemberRate(() => 0);
    for (let i = 0; i < 1000; i++) r.take("a", "message_teammate", i);
  });
});

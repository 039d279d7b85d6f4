/** The pure parts of teams and the design's names: teammate names, Doppler forms, start fingerprints, ref names. */
import { describe, expect, it } from "vitest";
import { startInput } from "../../src/api/index.js";
import { SessionError } from "../../src/core/errors.js";
import { newRecord, sessionMap, type SessionRecord } from "../../src/store/schema.js";
import { checkChosenId, dopplerChoice, startFingerprint } from "../../src/sessions/launch/options.js";
import { claimTeammate } from "../../src/sessions/teams/team.js";

const rec = (id: string, p: Partial<SessionRecord>) =>
  newRecord({ session_id: id, claude_session_id: id, backend: "tmux", status: "idle", cwd: "/", ...p });

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof SessionError ? e.code : String(e);
  }
  return undefined;
}

describe("teammate names", () => {
  it("gives the first free member-N, keeps ended members' names, and refuses a live duplicate", () => {
    const s = sessionMap({
      a: rec("a", { team_name: "t", teammate_name: "member-1" }),
      b: rec("b", { team_name: "t", teammate_name: "member-2", status: "dead" }),
      c: rec("c", { team_name: "other", teammate_name: "member-3" }),
    });
    const n = rec("n", { team_name: "t" });
    claimTeammate(s, n);
    expect(n.teammate_name).toBe("member-3");
    expect(code(() => claimTeammate(s, rec("d", { team_name: "t", teammate_name: "member-1" })))).toBe("INVALID_ARGUMENT");
    // An ended member's name may be taken by a new live session.
    expect(code(() => claimTeammate(s, rec("e", { team_name: "t", teammate_name: "member-2" })))).toBeUndefined();
    expect(code(() => claimTeammate(s, rec("f", { teammate_name: "x" })))).toBe("INVALID_ARGUMENT");
  });
});

describe("the design's names", () => {
  it("flat and nested Doppler options are one choice; a disagreement is refused", () => {
    expect(dopplerChoice({ doppler_project: "api", doppler_config: "dev" })).toEqual({ project: "api", config: "dev" });
    expect(dopplerChoice({ doppler: { project: "api" }, doppler_config: "dev" })).toEqual({ project: "api", config: "dev" });
    expect(dopplerChoice({})).toBeUndefined();
    expect(code(() => dopplerChoice({ doppler: { project: "a" }, doppler_project: "b" }))).toBe("INVALID_ARGUMENT");
  });

  it("a start's fingerprint ignores the prompt and env values, not the options", () => {
    const base = startInput.parse({ cwd: "/w", model: "sonnet", env: { A: "1" } });
    const fp = startFingerprint(base);
    expect(startFingerprint({ ...base, prompt: "hi", env: { A: "secret" } })).toBe(fp);
    expect(startFingerprint({ ...base, doppler_project: "p" })).toBe(startFingerprint({ ...base, doppler: { project: "p" } }));
    expect(startFingerprint({ ...base, model: "opus" })).not.toBe(fp);
    expect(startFingerprint({ ...base, env: { B: "1" } })).not.toBe(fp);
    expect(code(() => checkChosenId("bin"))).toBe("INVALID_ARGUMENT");
    expect(code(() => checkChosenId("my-session_1"))).toBeUndefined();
  });

  it("worktree refs that git could read as options or that are not refs are refused by the schema", () => {
    const ok = (worktree: unknown) => startInput.safeParse({ cwd: "/w", worktree }).success;
    expect(ok(true)).toBe(true);
    expect(ok({ branch: "feature/x", base: "main" })).toBe(true);
    for (const bad of [
      { branch: "-x" },
      { base: "--upload-pack=x" },
      { branch: "a..b" },
      { branch: "a b" },
      { branch: "x.lock" },
      { branch: "end/" },
      { base: "HEAD@{1}" },
    ]) {
      expect(ok(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

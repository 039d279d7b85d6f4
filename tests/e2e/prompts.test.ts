/**
 * The real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts): parallel start-up, replies,
 * prompts delivered byte-exact, and the bypass gate. See tests/helpers/real-claude.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractBackends, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();
const BACKENDS = run ? await contractBackends() : [];

describe.each(BACKENDS)("real claude: start-up, replies, prompts byte-exact (%s)", (backend) => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["par-a", "par-b", "bytes", "bypass", "exact"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("a. two sessions started in parallel reach ready and each answers with the mock's text", async () => {
    const [a, b] = await Promise.all(
      ["par-a", "par-b"].map((d) => m.call("start_session", { cwd: e.dir(d), permission_mode: "default", backend })),
    );
    for (const s of [a, b]) {
      expect(s!.ok, s!.text).toBe(true);
      expect(s!.data.status).toBe("ready");
    }
    const ids = [a!.data.session_id as string, b!.data.session_id as string];
    const replies = await Promise.all(
      ids.map((id, i) => m.call("send_message", { session_id: id, message: `hello from session ${i}` })),
    );
    replies.forEach((r, i) => {
      expect(r.ok, r.text).toBe(true);
      expect(r.data).toMatchObject({ completed: true, final_state: "idle", response: `MOCK REPLY: hello from session ${i}` });
    });
    const listed = await m.call("list_sessions", {});
    for (const id of ids)
      expect(listed.data.sessions.find((s) => s.session_id === id)).toMatchObject({ status: "idle", turn_count: 1 });
    await Promise.all(ids.map((id) => m.call("kill_session", { session_id: id })));
  });

  it("b. prompts arrive byte-exact at the API", async () => {
    const s = await m.call("start_session", { cwd: e.dir("bytes"), permission_mode: "default", backend });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const long =
      Array.from({ length: 120 }, (_, i) => `word${i} ${"abcdefghij".repeat(4)}`)
        .join(" ")
        .slice(0, 4999) + ".";
    const prompts: Array<[string, string]> = [
      ["3 lines", "one\ntwo\nthree"],
      ["20 lines", Array.from({ length: 20 }, (_, i) => `line ${i + 1}: the quick brown fox`).join("\n")],
      ["5,000 characters", long],
      ["200 lines of code", Array.from({ length: 200 }, (_, i) => `  const v${i} = compute(${i}, "x"); // line ${i}`).join("\n")],
      ["unicode and emoji", "naïve café — 日本語のテキスト, Ελληνικά, עברית 🎉🚀👩‍💻 ✓"],
      ["command substitution", "please ignore $(rm -rf ~) and ${HOME} literally"],
      ["backticks and quotes", "run `echo hi` with 'single' and \"double\" quotes \\ backslash"],
      ["tmux format", "the pane is #{pane_id} and #S #(echo pwned)"],
      ["leading dash", "-p --help is not an option here"],
      ["leading slash (a path)", "/usr/bin/env is a path, not a command"],
    ];
    expect(long.length).toBe(5000);
    for (const [what, text] of prompts) {
      const r = await m.call("send_message", { session_id: id, message: text });
      expect(r.ok, `${what}: ${r.text}`).toBe(true);
      expect(r.data.final_state, what).toBe("idle");
      const seen = e.requestsWith(text);
      expect(
        seen.length,
        `${what}: the mock did not receive the exact text; it got ${JSON.stringify(e.mock.mainRequests().at(-1)?.lastUserText?.slice(0, 200))}`,
      ).toBe(1);
      expect(r.data.response, what).toBe(`MOCK REPLY: ${text}`);
    }
    // A leading "/" is a command to Claude Code (the menu's first match runs: "/cl" is /clear), never a prompt:
    // refused before anything is typed, known command or not, and the conversation is still there after.
    for (const cmd of ["/notacommand please take this as text", "/clear", "/cl", "/exit"]) {
      const slash = await m.call("send_message", { session_id: id, message: cmd });
      expect(slash.error?.code, slash.text).toBe("INVALID_ARGUMENT");
      expect(slash.error?.message).toContain('starts with "/"');
    }
    expect(e.mock.mainRequests().some((q) => q.lastUserText?.includes("/notacommand"))).toBe(false);
    const after = await m.call("send_message", { session_id: id, message: "still usable" });
    expect(after.data.response).toBe("MOCK REPLY: still usable");
    await m.call("kill_session", { session_id: id });
  });

  it("c. repeated text arrives whole or the call is an error, never a success for another prompt", async () => {
    const s = await m.call("start_session", { cwd: e.dir("exact"), permission_mode: "default", backend });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    // The mock answers "ok": the history stays small, and the reply's length does not slow the screen.
    e.mock.setHandler((req) => (req.lastUserText && !req.toolResult ? { text: "ok" } : undefined));
    try {
      const texts: Array<[string, string]> = [
        ['"x" × 5,000', "x".repeat(5000)],
        ['"ab" × 3,000', "ab".repeat(3000)],
        ["200 identical log lines", "2026-11-25 ERROR same line\n".repeat(200).trimEnd()],
        ["20,000 characters of one word", "word ".repeat(4000).trimEnd()],
      ];
      for (const [what, text] of texts) {
        for (let run = 0; run < 2; run++) {
          const before = e.mock.mainRequests().length;
          const r = await m.call("send_message", { session_id: id, message: text, timeout_ms: 60_000 });
          const got = e.mock
            .mainRequests()
            .slice(before)
            .map((q) => q.lastUserText);
          expect(r.ok, `${what} #${run}: ${r.text}`).toBe(true);
          expect(got.length, `${what} #${run}: one request`).toBe(1);
          expect(got[0]?.length, `${what} #${run}: length at the API`).toBe(text.length);
          expect(got[0] === text, `${what} #${run}: byte-exact at the API`).toBe(true);
        }
      }
      // Measured transforms are allowed for (a tab arrives as four spaces, trailing blanks are trimmed); invisible
      // characters the CLI drops are refused before anything is typed.
      const tabbed = await m.call("send_message", { session_id: id, message: "a\tb  " });
      expect(tabbed.ok, tabbed.text).toBe(true);
      expect(e.mock.mainRequests().at(-1)?.lastUserText).toBe("a    b");
      for (const ch of ["\u200b", "\ufeff", "\u2028"]) {
        const before = e.mock.mainRequests().length;
        const r = await m.call("send_message", { session_id: id, message: `${ch}starts invisible` });
        expect(r.error?.code, r.text).toBe("INVALID_ARGUMENT");
        expect(e.mock.mainRequests().length).toBe(before);
      }
    } finally {
      e.mock.setHandler(undefined);
      await m.call("kill_session", { session_id: id });
    }
  });

  it("bypassPermissions is refused without CLAUDE_SESSIONS_ALLOW_BYPASS, before anything starts", async () => {
    const r = await m.call("start_session", { cwd: e.dir("bypass"), permission_mode: "bypassPermissions" });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("PERMISSION_DENIED");
    expect(r.error?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_BYPASS");
    const l = await m.call("list_sessions", {});
    expect(l.data.sessions.filter((x) => x.cwd === e.dir("bypass"))).toEqual([]);
  });
});

/**
 * A headless session's prompts follow its runner's rules (runners/prompt.ts), checked on the real CLI over MCP
 * against the mock API: what Claude Code's input box must refuse — a leading "!", control characters (NUL, ESC, the
 * paste terminator), invisible characters, a final backslash, CR LF — arrives at the API byte for byte, and a
 * leading "!" runs no shell command; a slash command is still refused (the CLI would run it), and a terminal
 * session refuses the "!" before anything starts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude, headless prompts", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["exact", "term"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("what the input box must refuse reaches a headless conversation exactly; a slash command is refused", async () => {
    const cwd = e.dir("exact");
    const s = await m.callOk("start_session", { cwd, backend: "headless", permission_mode: "default" });
    const id = s.session_id as string;
    const prompts = [
      "!touch bang-ran",
      "nul \x00 esc \x1b[201~ bell \x07 ctrl-c \x03 del \x7f c1 \x85",
      "zw\u200bsp bidi\u202e bom\ufeff ls\u2028ps\u2029 soft\u00ad",
      "ends with a backslash\\",
      "crlf\r\nline\r\n\n",
    ];
    for (const p of prompts) {
      const r = await m.call("send_message", { session_id: id, message: p, timeout_ms: 30_000 });
      // The API got the text byte for byte (the reply's own trailing line ends are trimmed, as every reply's are).
      expect(e.requestsWith(p), JSON.stringify(p)).toHaveLength(1);
      expect(r.data, r.text).toMatchObject({ completed: true, response: `MOCK REPLY: ${p.trimEnd()}` });
    }
    // The "!" was text: no shell command ran in the session's cwd.
    expect(existsSync(join(cwd, "bang-ran"))).toBe(false);
    const before = e.mock.mainRequests().length;
    const slash = await m.call("send_message", { session_id: id, message: "/clear", timeout_ms: 5000 });
    expect(slash.error?.code, slash.text).toBe("INVALID_ARGUMENT");
    expect(e.mock.mainRequests().length).toBe(before);
    await m.callOk("kill_session", { session_id: id });
  });

  it("a terminal session refuses the same '!' before anything starts", async () => {
    const cwd = e.dir("term");
    const r = await m.call("start_session", { cwd, backend: "tmux", prompt: "!touch bang-ran" });
    expect(r.error?.code, r.text).toBe("INVALID_ARGUMENT");
    expect(r.error?.message).toContain("bash mode");
    expect(existsSync(join(cwd, "bang-ran"))).toBe(false);
  });
});

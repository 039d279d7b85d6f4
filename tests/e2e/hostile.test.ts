/**
 * The real Claude Code CLI against hostile prompts: each arrives byte-exact at the (mock) API or is refused
 * with INVALID_ARGUMENT; no shell command it carries ever runs; the session stays usable.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractBackends, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";
import { INPUT_MODE_PREFIXES } from "../../src/runners/terminal/screen/prompt.js";

const run = realClaudeOrSkip();
const BACKENDS = run ? await contractBackends() : [];

describe.each(BACKENDS)("real claude: hostile prompts (%s)", (backend) => {
  let e: E2e;
  let m: Mcp;
  let id: string;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["hostile"] });
    m = await e.connect();
    const s = await m.call("start_session", { cwd: e.dir("hostile"), permission_mode: "default", backend });
    expect(s.ok, s.text).toBe(true);
    id = s.data.session_id as string;
  });
  afterAll(async () => {
    await m?.call("kill_session", { session_id: id });
    await m?.close();
    expect(e?.mock.stray ?? []).toEqual([]);
    await e?.cleanup();
  });

  const sentinel = (tag: string) => join(e.world.root, `pwned-${tag}`);

  it("control characters, paste terminators and input-mode prefixes are refused before anything is typed", async () => {
    const before = e.mock.mainRequests().length;
    const cases: string[] = [];
    for (let c = 0; c < 0x20; c++)
      if (c !== 9 && c !== 10 && c !== 13) cases.push(`before${String.fromCharCode(c)}!touch ${sentinel(`c${c}`)}`);
    const end = "\x1b[201~";
    cases.push(
      `${end}!touch ${sentinel("start")}`,
      `middle ${end}\r!touch ${sentinel("middle")}`,
      `at the end${end}`,
      `${"x".repeat(698)}${end}!touch ${sentinel("boundary")}`,
    );
    for (const p of Object.keys(INPUT_MODE_PREFIXES)) cases.push(`${p}touch ${sentinel("prefix")}`);
    for (const msg of cases) {
      const r = await m.call("send_message", { session_id: id, message: msg });
      expect(r.error?.code, JSON.stringify(msg)).toBe("INVALID_ARGUMENT");
    }
    expect(e.mock.mainRequests().length).toBe(before);
    const ok = await m.call("send_message", { session_id: id, message: "usable after refusals" });
    expect(ok.data.response, ok.text).toBe("MOCK REPLY: usable after refusals");
  });

  it("a prefix after leading whitespace stays text and arrives byte-exact; nothing runs", async () => {
    for (const p of Object.keys(INPUT_MODE_PREFIXES)) {
      for (const ws of [" ", "  "]) {
        const text = `${ws}${p}touch ${sentinel("spaced")}`;
        const r = await m.call("send_message", { session_id: id, message: text });
        expect(r.ok, r.text).toBe(true);
        expect(
          e.requestsWith(text).length,
          `${JSON.stringify(text)}: got ${JSON.stringify(e.mock.mainRequests().at(-1)?.lastUserText)}`,
        ).toBe(1);
      }
    }
    // A line break, then a prefix: also text.
    const multi = `first line\n!touch ${sentinel("second-line")}`;
    const r = await m.call("send_message", { session_id: id, message: multi });
    expect(r.ok, r.text).toBe(true);
    expect(e.requestsWith(multi).length).toBe(1);
  });

  it("a pasted tab reaches the API as four spaces (the interactive CLI's own conversion, documented)", async () => {
    const r = await m.call("send_message", { session_id: id, message: "tab\there" });
    expect(r.ok, r.text).toBe(true);
    expect(e.requestsWith("tab    here").length).toBe(1);
  });

  it("no sentinel file was ever created", () => {
    for (const tag of [
      "start",
      "middle",
      "boundary",
      "prefix",
      "spaced",
      "second-line",
      ...Array.from({ length: 32 }, (_, c) => `c${c}`),
    ]) {
      expect(existsSync(sentinel(tag)), tag).toBe(false);
      expect(existsSync(join(e.dir("hostile"), `pwned-${tag}`)), tag).toBe(false);
    }
  });
});

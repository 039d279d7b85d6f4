/**
 * The real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts): the usage a turn reports is
 * exactly what the API reported for it, although the CLI writes the streamed reply as several transcript lines; a
 * tmux turn whose tool step crosses max_budget_usd is interrupted before its next API reply comes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: usage and cost of a turn", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["usage", "queued", "budget"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("send_message's usage equals the API's tokens for the turn, each message once; cost from the price table", async () => {
    const cwd = e.dir("usage");
    const s = await m.callOk("start_session", { cwd, permission_mode: "default", model: "claude-sonnet-4-6" });
    const usage = { input_tokens: 1234, output_tokens: 567, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000 };
    e.mock.setNextReply({
      blocks: [
        { type: "text", text: "First part of the answer." },
        { type: "text", text: "Second part." },
      ],
      usage,
    });
    const r = await m.callOk("send_message", {
      session_id: s.session_id,
      message: "count my tokens",
      wait_for_usage: true,
      timeout_ms: 60_000,
    });
    expect(r).toMatchObject({ completed: true, usage });
    expect(r.model_usage).toEqual({ "claude-sonnet-4-6": usage });
    // $3 input, $15 output, $3.75 5-minute cache writes, $0.30 cache reads per million tokens.
    expect(r.cost_usd).toBeCloseTo((1234 * 3 + 567 * 15 + 100 * 3.75 + 2000 * 0.3) / 1e6, 9);

    // The CLI wrote this one API message as several lines (one per content block), each repeating its usage.
    const lines = readFileSync(e.transcriptFile(cwd, s.claude_session_id), "utf8")
      .split("\n")
      .filter((l) => l.includes('"assistant"'));
    const ids = lines.map((l) => (JSON.parse(l) as { message?: { id?: string } }).message?.id).filter(Boolean);
    expect(ids.length).toBeGreaterThan(new Set(ids).size);

    const listed = await m.callOk("list_sessions", {});
    expect(listed.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({ total_usage: usage });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("a prompt queued during a turn is charged only its own API message; the session total counts both once", async () => {
    const cwd = e.dir("queued");
    const s = await m.callOk("start_session", { cwd, permission_mode: "default", model: "claude-sonnet-4-6" });
    const first = { input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const second = { input_tokens: 2000, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    e.mock.setNextReply({ text: "the long answer", usage: first, delayMs: 1500 });
    e.mock.setNextReply({ text: "the queued answer", usage: second });
    await m.callOk("send_message", { session_id: s.session_id, message: "the long one", wait_for_response: false });
    const q = await m.callOk("send_message", {
      session_id: s.session_id,
      message: "the queued one",
      wait_for_usage: true,
      queue: true,
      timeout_ms: 60_000,
    });
    expect(q).toMatchObject({ queued: true, completed: true, response: "the queued answer", usage: second });
    const sum = { input_tokens: 3000, output_tokens: 107, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    // Figures read when the turn ended, although the CLI writes a queued turn's lines behind its Stop hook.
    expect((await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id)).toMatchObject({
      total_usage: sum,
    });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("a tmux turn that crosses max_budget_usd mid-turn is interrupted (the server reads the transcript as it lands)", async () => {
    const cwd = e.dir("budget");
    writeFileSync(join(cwd, "notes.txt"), "some notes\n");
    const s = await m.callOk("start_session", {
      cwd,
      permission_mode: "default",
      model: "claude-sonnet-4-6",
      backend: "tmux",
      max_budget_usd: 0.05,
    });
    // The turn's first API message asks for a tool and costs $0.153 (1,000 input, 10,000 output tokens at $3/$15 per M);
    // the next one, after the tool's result, would take a minute.
    e.mock.setNextReply({
      blocks: [{ type: "tool_use", name: "Read", input: { file_path: join(cwd, "notes.txt") } }],
      usage: { input_tokens: 1000, output_tokens: 10_000 },
    });
    e.mock.setNextReply({ text: "the expensive rest", delayMs: 60_000 });
    const t0 = Date.now();
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "read my notes", timeout_ms: 50_000 });
    expect(r).toMatchObject({ completed: true, timed_out: false, turn_outcome: "interrupted" });
    expect(Date.now() - t0).toBeLessThan(40_000);
    const refused = await m.call("send_message", { session_id: s.session_id, message: "and more" });
    expect(refused.error?.code).toBe("LIMIT_REACHED");
    expect(e.requestsWith("and more")).toHaveLength(0);
    await m.callOk("kill_session", { session_id: s.session_id });
  }, 90_000);
});

/**
 * Issue #12 through the built server and the fake claude, on every backend: a turn's usage and cost from the
 * transcript, the session's totals in list_sessions, max_budget_usd refusing further prompts, the execution
 * history recorded at turn end, and an appended turn found by search_conversations without a restart (its speed is
 * the bench's).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { can, connect, contractKinds, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";
import { Transcript } from "../helpers/transcripts.js";

const BACKENDS = await contractKinds();

// The fake claude writes every assistant line with input 12, output ceil(reply/4), model claude-opus-4-8 ($5/$25 per M).
const tokensOf = (reply: string) => ({
  input_tokens: 12,
  output_tokens: Math.max(1, Math.ceil(reply.length / 4)),
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});
const costOf = (reply: string) => Math.round(12 * 5 + Math.max(1, Math.ceil(reply.length / 4)) * 25) / 1e6;

describe.each(BACKENDS)("usage, cost, budget and history (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("a turn carries its usage and cost; list_sessions the totals; max_budget_usd refuses the next prompt with the figures", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("cost"), max_budget_usd: 0.0003 });
    const r1 = await m.callOk("send_message", { session_id: s.session_id, message: "hello", wait_for_usage: true });
    expect(r1).toMatchObject({
      completed: true,
      response: "FAKE REPLY: hello",
      usage: tokensOf("FAKE REPLY: hello"),
      cost_usd: costOf("FAKE REPLY: hello"),
    });
    expect(r1.model_usage).toEqual({ "claude-opus-4-8": tokensOf("FAKE REPLY: hello") });

    // wait_for_completion reports the turn it waited for, with the same fields.
    await m.callOk("send_message", { session_id: s.session_id, message: "second one", wait_for_response: false });
    const w1 = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    expect(w1).toMatchObject({ completed: true });
    // It gives the transcript 150 ms after the turn's end; a loaded machine may need another look.
    const w2 = await until(
      async () => {
        const r = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 1000 });
        return r.usage ? r : undefined;
      },
      5000,
      50,
    );
    expect(w2).toMatchObject({
      completed: true,
      usage: tokensOf("FAKE REPLY: second one"),
      cost_usd: costOf("FAKE REPLY: second one"),
    });

    const total = costOf("FAKE REPLY: hello") + costOf("FAKE REPLY: second one");
    // Headless: the wait's figures came from the SDK's result; the totals catch up from the transcript.
    if (!can(backend, "totals_at_turn_end"))
      await until(
        async () =>
          (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id)?.total_usage?.input_tokens ===
          24,
        5000,
        20,
      );
    const listed = await m.callOk("list_sessions", {});
    const me = listed.sessions.find((x) => x.session_id === s.session_id)!;
    expect(me.total_usage).toEqual({
      input_tokens: 24,
      output_tokens: tokensOf("FAKE REPLY: hello").output_tokens + tokensOf("FAKE REPLY: second one").output_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(me.total_cost_usd).toBeCloseTo(total, 9);
    expect(me.limit_reached).toMatch(/max_budget_usd: the session has cost \$0\.0004 of its \$0\.0003 budget/);

    const refused = await m.call("send_message", { session_id: s.session_id, message: "third" });
    expect(refused.error?.code).toBe("LIMIT_REACHED");
    expect(refused.error?.message).toContain("$0.0003");
    expect(refused.error?.suggestion).toMatch(/max_budget_usd/);

    const ex = await m.callOk("get_execution_history", { session_id: s.session_id });
    expect(ex.total_count).toBe(2);
    expect(ex.executions[1]).toMatchObject({
      session_id: s.session_id,
      claude_session_id: s.claude_session_id,
      prompt: "hello",
      response: "FAKE REPLY: hello",
      outcome: "completed",
      cost_usd: costOf("FAKE REPLY: hello"),
    });
    expect(ex.executions[1]!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(String(ex.executions[1]!.ended_at))).toBeGreaterThanOrEqual(
      Date.parse(String(ex.executions[1]!.started_at)),
    );
    expect(await m.callOk("clear_execution_history", { session_id: s.session_id })).toEqual({ cleared_count: 2 });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("a prompt queued during a turn is charged only its own turn's tokens; the session total counts both once", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("queued") });
    const first = "FAKE_SLOW:1500 the long one";
    await m.callOk("send_message", { session_id: s.session_id, message: first, wait_for_response: false });
    const q = await m.callOk("send_message", {
      session_id: s.session_id,
      message: "the queued one",
      wait_for_usage: true,
      queue: true,
      timeout_ms: 20_000,
    });
    expect(q).toMatchObject({ queued: true, completed: true, usage: tokensOf("FAKE REPLY: the queued one") });
    if (!can(backend, "totals_at_turn_end"))
      await until(
        async () =>
          (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id)?.total_usage?.input_tokens ===
          24,
        5000,
        20,
      );
    const listed = await m.callOk("list_sessions", {});
    const out = tokensOf(`FAKE REPLY: ${first}`).output_tokens + tokensOf("FAKE REPLY: the queued one").output_tokens;
    expect(listed.sessions.find((x) => x.session_id === s.session_id)?.total_usage).toEqual({
      input_tokens: 24,
      output_tokens: out,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("an appended turn is found by search_conversations without a restart, and the hit resumes in one call", async () => {
    const cwd = w.dir("search");
    const s = await m.callOk("start_session", { cwd });
    await m.callOk("send_message", { session_id: s.session_id, message: "the quokkaplan 設定ファイル rollout" });
    // The index picks the appended lines up as the server runs (how fast is measured by `npm run bench`).
    const hit = await until(
      async () => {
        const r = await m.callOk("search_conversations", { query: '"quokkaplan 設定ファイル"' });
        return r.results[0];
      },
      15_000,
      100,
    );
    expect(hit.resume).toEqual({ claude_session_id: s.claude_session_id, cwd });
    const conv = await m.callOk("list_conversations", { cwd });
    expect(conv.conversations[0]).toMatchObject({ claude_session_id: s.claude_session_id, session_id: s.session_id, turns: 1 });
    const near = await m.callOk("search_conversations", { query: "quokkaplanx" });
    expect(near.results).toEqual([]);
    await m.callOk("kill_session", { session_id: s.session_id });
    // The hit's resume arguments as they come (its cwd is typed string | null; resume_session takes a string).
    const resumed = (await m.callRaw<{ session_id: string }>("resume_session", hit.resume)).data;
    expect(resumed.session_id).toBe(s.session_id);
    await m.callOk("kill_session", { session_id: s.session_id });
  });
});

describe("the transcript index of a running server", () => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld();
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("conversations Claude wrote outside the server after it started are listed and found (the index catches up on queries)", async () => {
    const configDir = join(w.home, ".claude");
    const first = new Transcript(configDir, w.dir("outside")).turn("the wombatledger review", "done");
    const found = await until(
      async () => (await m.callOk("search_conversations", { query: "wombatledger" })).results[0],
      3000,
      50,
    );
    expect(found.claude_session_id).toBe(first.sessionId);
    const second = new Transcript(configDir, w.dir("outside")).turn("the numbatledger review", "done");
    const t0 = Date.now();
    const listed = await until(
      async () =>
        (await m.callOk("list_conversations", { cwd: w.dir("outside") })).conversations.find(
          (c) => c.claude_session_id === second.sessionId,
        ),
      10_000,
      100,
    );
    expect(listed).toBeDefined();
    // Stale by at most the freshness window (5 s) plus one sync.
    expect(Date.now() - t0).toBeLessThan(7000);
  });
});

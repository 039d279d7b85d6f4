/**
 * Issue 38, the answer when the turn ends: `send_message {wait_for_response: true}` returns at the Stop hook with the
 * reply and `usage_pending: true` (the fake claude, like the real CLI, writes the reply's transcript line ~30 ms
 * after Stop); the turn's usage, cost and the session's totals follow in a `usage` notification. `wait_for_usage:
 * true` waits for them as before. A budget still binds: the next prompt waits for the pending usage and is refused.
 */
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();

// The fake claude writes every assistant line with input 12, output ceil(reply/4), model claude-opus-4-8 ($5/$25 per M).
const tokensOf = (reply: string) => ({
  input_tokens: 12,
  output_tokens: Math.max(1, Math.ceil(reply.length / 4)),
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});
const costOf = (reply: string) => Math.round(12 * 5 + Math.max(1, Math.ceil(reply.length / 4)) * 25) / 1e6;

describe.runIf(HAS_TMUX)("the answer when the turn ends (issue 38)", () => {
  let w: World;
  let m: Mcp;
  const notes: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    m = await connect(w);
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notes.push(n.params.data as Record<string, unknown>),
    );
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("returns the reply at Stop with usage_pending; the usage notification brings the turn's figures and the session's totals", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("pending") });
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "hello" });
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: hello", usage_pending: true });
    expect(r.usage).toBeUndefined();
    expect(r.cost_usd).toBeUndefined();
    const n = await until(() => notes.find((x) => x.event === "usage" && x.session_id === s.session_id), 10_000);
    expect(n).toMatchObject({
      turn: 1,
      usage: tokensOf("FAKE REPLY: hello"),
      cost_usd: costOf("FAKE REPLY: hello"),
      cost_complete: true,
      session_turns: 1,
      session_usage: tokensOf("FAKE REPLY: hello"),
    });
    expect(n.session_cost_usd).toBeCloseTo(costOf("FAKE REPLY: hello"), 9);

    // A second turn: its own notification, the totals of both.
    const r2 = await m.callOk("send_message", { session_id: s.session_id, message: "two" });
    expect(r2).toMatchObject({ completed: true, response: "FAKE REPLY: two", usage_pending: true });
    const n2 = await until(() => notes.find((x) => x.event === "usage" && x.session_id === s.session_id && x.turn === 2), 10_000);
    expect(n2).toMatchObject({ usage: tokensOf("FAKE REPLY: two"), session_turns: 2 });
    expect(n2.session_cost_usd).toBeCloseTo(costOf("FAKE REPLY: hello") + costOf("FAKE REPLY: two"), 9);
  });

  it("wait_for_usage: true returns the turn's usage, cost and totals in the result, with no usage_pending", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("waited") });
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "hello", wait_for_usage: true });
    expect(r).toMatchObject({
      completed: true,
      response: "FAKE REPLY: hello",
      usage: tokensOf("FAKE REPLY: hello"),
      cost_usd: costOf("FAKE REPLY: hello"),
      session_turns: 1,
    });
    expect(r.usage_pending).toBeUndefined();
  });

  it("a budget still binds: the prompt after a turn whose usage was pending waits for it and is refused", async () => {
    // One turn of "FAKE REPLY: hello" costs $0.000160: over a $0.0001 budget once it is counted.
    const s = await m.callOk("start_session", { cwd: w.dir("budget"), max_budget_usd: 0.0001 });
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "hello" });
    expect(r).toMatchObject({ completed: true, usage_pending: true });
    const refused = await m.call("send_message", { session_id: s.session_id, message: "again" });
    expect(refused.error?.code).toBe("LIMIT_REACHED");
    expect(refused.error?.message).toContain("$0.0001");
  });
});

// Headless: the Agent SDK's result (its usage and cost) follows the Stop hook; the fake holds it back 500 ms, as the real
// CLI does by 15–230 ms, so that the reply is surely in hand before the figures are.
describe("the answer when the turn ends, headless (issue 38)", () => {
  let w: World;
  let m: Mcp;
  const notes: Array<Record<string, unknown>> = [];
  const usageOf =
    (id: string, turn = 1) =>
    () =>
      notes.find((x) => x.event === "usage" && x.session_id === id && x.turn === turn);
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless", FAKE_CLAUDE_RESULT_MS: "500" });
    m = await connect(w);
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notes.push(n.params.data as Record<string, unknown>),
    );
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("run_task returns the reply at Stop with usage_pending; the notification brings the SDK's figures, equal to a waited run's", async () => {
    const waited = await m.callOk("run_task", { cwd: w.dir("waited"), prompt: "same prompt", wait_for_usage: true });
    expect(waited).toMatchObject({ completed: true, response: "FAKE REPLY: same prompt", session_turns: 1 });
    expect(waited.usage_pending).toBeUndefined();
    expect(waited.usage?.output_tokens).toBeGreaterThan(0);
    expect(waited.cost_usd).toBeGreaterThan(0);

    const r = await m.callOk("run_task", { cwd: w.dir("pending"), prompt: "same prompt" });
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: same prompt", usage_pending: true });
    expect(r.usage).toBeUndefined();
    expect(r.cost_usd).toBeUndefined();
    const n = await until(usageOf(r.session_id), 10_000);
    expect(n).toMatchObject({ turn: 1, usage: waited.usage, cost_usd: waited.cost_usd, session_turns: 1 });
    expect(n.session_cost_usd).toBeCloseTo(waited.cost_usd!, 9);
    // The turn is counted all the same: the session's totals say so.
    const row = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === r.session_id);
    expect(row?.total_cost_usd).toBeCloseTo(waited.cost_usd!, 9);
  });

  it("send_message to a headless session: usage_pending, then the turn's figures; wait_for_usage waits for them", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("send") });
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "hello" });
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: hello", usage_pending: true });
    const n = await until(usageOf(s.session_id), 10_000);
    expect(n.usage).toMatchObject({ output_tokens: expect.any(Number) });
    const r2 = await m.callOk("send_message", { session_id: s.session_id, message: "two", wait_for_usage: true });
    expect(r2).toMatchObject({ completed: true, response: "FAKE REPLY: two", session_turns: 2 });
    expect(r2.usage_pending).toBeUndefined();
    expect(r2.session_cost_usd).toBeCloseTo((n.cost_usd as number) + r2.cost_usd!, 9);
  });

  it("run_task {keep_session: false}: the session ends once its figures are in, and they are counted", async () => {
    const r = await m.callOk("run_task", { cwd: w.dir("once"), prompt: "one shot", keep_session: false });
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: one shot", usage_pending: true, kept: false });
    const n = await until(usageOf(r.session_id), 10_000);
    expect(n.cost_usd).toBeGreaterThan(0);
    const row = await until(async () => {
      const x = (await m.callOk("list_sessions", {})).sessions.find((y) => y.session_id === r.session_id);
      return x && x.status !== "idle" && x.status !== "busy" ? x : undefined;
    }, 10_000);
    expect(row.total_cost_usd).toBeCloseTo(n.cost_usd as number, 9);
  });
});

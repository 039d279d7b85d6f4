/**
 * Issue #24 items 5–7 through the built server and the fake claude: a budget cannot be bypassed by a model without
 * a price (refused at start, fails closed after a turn on one, priced by the operator's CLAUDE_SESSIONS_PRICES),
 * every lower-bound cost says cost_complete: false, turn results carry the session's totals, a failed turn is a
 * tool error, and the execution history records every turn (died, start failures, timed-out and cancelled waits)
 * within its retention, with per-session metrics in list_sessions and the CLI's `cost --sessions`.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, contractBackends, failedTurn, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";

const [BACKEND] = await contractBackends();

// The fake claude writes every assistant line with input 12 and output ceil(reply/4) tokens, on its model.
const out = (reply: string) => Math.max(1, Math.ceil(reply.length / 4));
const opus = (reply: string) => Math.round(12 * 5 + out(reply) * 25) / 1e6;

type Row = Record<string, unknown>;
const executions = async (m: Mcp, session_id: string) => m.callOk("get_execution_history", { session_id, limit: 100 });
const listed = async (m: Mcp, id: string, include_metadata = false) =>
  (await m.callOk("list_sessions", { include_metadata })).sessions.find((s) => s.session_id === id)!;

describe.skipIf(!BACKEND)(`accounts (${BACKEND})`, () => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: BACKEND!, CLAUDE_SESSIONS_START_TIMEOUT_MS: "1500" });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("a budget with a model that has no price is refused at start, naming the model and CLAUDE_SESSIONS_PRICES; nothing starts", async () => {
    const r = await m.call("start_session", { cwd: w.dir("unpriced"), model: "claude-unknown-9", max_budget_usd: 1 });
    expect(r.error?.code).toBe("INVALID_ARGUMENT");
    expect(r.error?.message).toContain("claude-unknown-9");
    expect(r.error?.suggestion).toContain("CLAUDE_SESSIONS_PRICES");
    expect((await m.callOk("list_sessions", {})).total_count).toBe(0);
    // Without a budget the same model starts: its cost is only reported as unknown.
    const s = await m.callOk("start_session", { cwd: w.dir("unpriced"), model: "claude-unknown-9" });
    const t = await m.callOk("send_message", { session_id: s.session_id, message: "hello", wait_for_usage: true });
    expect(t).toMatchObject({
      completed: true,
      cost_usd: null,
      cost_complete: false,
      session_cost_usd: null,
      session_cost_complete: false,
      session_turns: 1,
    });
    expect(await listed(m, s.session_id)).toMatchObject({ total_cost_usd: null, cost_complete: false });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("a budgeted session whose turn ran on an unpriced model takes no more prompts (fails closed); resume is refused too", async () => {
    // The CLI picks the model itself (no --model): the turn names one the table does not know.
    const s = await m.callOk("start_session", {
      cwd: w.dir("fallback"),
      max_budget_usd: 5,
      env: { ANTHROPIC_MODEL: "claude-unknown-9" },
    });
    const t = await m.callOk("send_message", { session_id: s.session_id, message: "hello", wait_for_usage: true });
    expect(t).toMatchObject({ cost_usd: null, cost_complete: false, model_usage: { "claude-unknown-9": expect.any(Object) } });
    const refused = await m.call("send_message", { session_id: s.session_id, message: "again" });
    expect(refused.error?.code).toBe("LIMIT_REACHED");
    expect(refused.error?.message).toMatch(/claude-unknown-9.*no price.*cannot be computed/);
    expect(refused.error?.suggestion).toContain("CLAUDE_SESSIONS_PRICES");
    expect((await listed(m, s.session_id)).limit_reached).toMatch(/claude-unknown-9/);
    const ex = await executions(m, s.session_id);
    expect(ex.executions[0]).toMatchObject({ outcome: "completed", cost_usd: null, cost_complete: false });
    await m.callOk("kill_session", { session_id: s.session_id });
    const resumed = await m.call("resume_session", { session_id: s.session_id });
    expect(resumed.error?.code).toBe("INVALID_ARGUMENT");
    expect(resumed.error?.message).toContain("claude-unknown-9");
  });

  it("turn results carry the session's totals; a failed turn is a tool error with the same body", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("totals") });
    const a = await m.callOk("send_message", { session_id: s.session_id, message: "one", wait_for_usage: true });
    expect(a).toMatchObject({
      cost_usd: opus("FAKE REPLY: one"),
      cost_complete: true,
      session_turns: 1,
      session_cost_usd: opus("FAKE REPLY: one"),
      session_cost_complete: true,
    });
    expect(a.session_usage).toEqual(a.usage);
    const b = await m.callOk("send_message", { session_id: s.session_id, message: "two", wait_for_usage: true });
    expect(b.session_turns).toBe(2);
    expect(b.session_cost_usd).toBeCloseTo(opus("FAKE REPLY: one") + opus("FAKE REPLY: two"), 9);
    expect(b.session_usage).toMatchObject({ input_tokens: 24, output_tokens: out("FAKE REPLY: one") + out("FAKE REPLY: two") });
    // wait_for_completion on the turn that just ended: the same totals once the turn's figures are in.
    const w1 = await until(async () => {
      const r = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 1000 });
      return r.session_turns !== undefined ? r : undefined;
    }, 5000);
    expect(w1).toMatchObject({ session_turns: 2, session_cost_usd: b.session_cost_usd });
    // An API error: isError (TURN_FAILED), the body in error.details.result, totals included.
    const f = await m.call("send_message", { session_id: s.session_id, message: "FAKE_FAIL:529 overloaded" });
    expect(f.ok).toBe(false);
    expect(f.error?.retryable).toBe(true);
    const body = failedTurn(f);
    expect(body).toMatchObject({
      session_id: s.session_id,
      completed: true,
      final_state: "error",
      turn_outcome: "failed",
      session_turns: 3,
    });
    expect(String(body.error)).toContain("529 overloaded");
    // wait_for_completion reports the same failed turn the same way.
    expect(failedTurn(await m.call("wait_for_completion", { session_id: s.session_id, timeout_ms: 1000 }))).toMatchObject({
      turn_outcome: "failed",
    });
    await m.callOk("kill_session", { session_id: s.session_id });
    // run_task: the first turn with the session's totals; a failed first turn is a tool error too.
    const t = await m.callOk("run_task", {
      cwd: w.dir("task"),
      prompt: "task",
      backend: BACKEND,
      keep_session: false,
      wait_for_usage: true,
    });
    expect(t).toMatchObject({
      completed: true,
      cost_usd: opus("FAKE REPLY: task"),
      session_turns: 1,
      session_cost_usd: opus("FAKE REPLY: task"),
      session_cost_complete: true,
    });
    expect(
      failedTurn(
        await m.call("run_task", { cwd: w.dir("task"), prompt: "FAKE_FAIL:500 down", backend: BACKEND, keep_session: false }),
      ),
    ).toMatchObject({ turn_outcome: "failed", session_turns: 1 });
  });

  it("the execution history records died turns, failed starts, timed-out and cancelled waits; metrics in list_sessions and the CLI", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("history") });
    await m.callOk("send_message", { session_id: s.session_id, message: "fine" });
    // A send that stops waiting first: recorded timed_out; the turn goes on and gets its own record.
    const slow = await m.callOk("send_message", {
      session_id: s.session_id,
      message: "FAKE_SLOW:1200 slow one",
      timeout_ms: 200,
    });
    expect(slow.timed_out).toBe(true);
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    // A cancelled send: recorded cancelled.
    const ac = new AbortController();
    const cancelled = m.call(
      "send_message",
      { session_id: s.session_id, message: "FAKE_SLOW:1000 cancel me", timeout_ms: 10_000 },
      { signal: ac.signal },
    );
    await until(async () => ((await listed(m, s.session_id)).status === "busy" ? true : undefined), 5000);
    ac.abort();
    await cancelled.catch(() => undefined);
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    // A process that dies mid-turn: recorded died, and the send is a SESSION_DEAD tool error.
    failedTurn(
      await m.call("send_message", { session_id: s.session_id, message: "FAKE_CRASH now", timeout_ms: 10_000 }),
      "SESSION_DEAD",
    );
    const ex = await until(async () => {
      const r = await executions(m, s.session_id);
      return r.executions.some((e) => e.outcome === "died") && r.executions.filter((e) => e.outcome === "completed").length >= 3
        ? r
        : undefined;
    }, 5000);
    const by = (o: string) => ex.executions.filter((e) => e.outcome === o);
    expect(by("timed_out")[0]).toMatchObject({
      prompt: "FAKE_SLOW:1200 slow one",
      error: expect.stringContaining("the turn goes on"),
    });
    expect(by("cancelled")[0]).toMatchObject({ prompt: "FAKE_SLOW:1000 cancel me" });
    expect(by("died")[0]).toMatchObject({ prompt: "FAKE_CRASH now", error: expect.stringContaining("mid-turn") });
    expect(by("completed").map((e) => e.prompt)).toEqual(["FAKE_SLOW:1000 cancel me", "FAKE_SLOW:1200 slow one", "fine"]);
    expect(ex.total_count).toBe(ex.executions.length);

    // A start that never takes prompts: start_failed.
    const bad = await m.call("start_session", { cwd: w.dir("slow-start"), env: { FAKE_CLAUDE_STARTUP_MS: "6000" } });
    expect(bad.ok).toBe(false);
    const failedId = (await m.callOk("list_sessions", { status_filter: "all" })).sessions.find(
      (x) => x.cwd === w.dir("slow-start"),
    )!.session_id as string;
    expect((await executions(m, failedId)).executions).toMatchObject([{ outcome: "start_failed", prompt: "" }]);

    // The session_id filter and total_count: the other session's records are not counted.
    const all = await m.callOk("get_execution_history", {});
    expect(all.total_count).toBeGreaterThan(ex.total_count);

    // Metrics: 5 turn ends (3 completed, died… and the timed-out / cancelled waits are not turns), 1 of them an error.
    const meta = await listed(m, s.session_id, true);
    const metrics = meta.metrics as Row;
    expect(metrics).toMatchObject({ turns: 4, error_rate: 0.25, cost_complete: true });
    expect(metrics.p95_turn_ms as number).toBeGreaterThanOrEqual(metrics.avg_turn_ms as number);
    expect(metrics.p95_turn_ms as number).toBeGreaterThanOrEqual(1000);
    expect(metrics.cost_usd).toBeCloseTo(
      opus("FAKE REPLY: fine") + opus("FAKE REPLY: FAKE_SLOW:1200 slow one") + opus("FAKE REPLY: FAKE_SLOW:1000 cancel me"),
      6,
    );
    expect(((await listed(m, failedId, true)).metrics as Row).error_rate).toBe(1);

    const cli = spawnSync(process.execPath, [CLI, "cost", "--sessions"], {
      env: w.env,
      encoding: "utf8",
      timeout: 30_000,
      cwd: w.root,
    });
    expect(cli.status, cli.stderr).toBe(0);
    const line = cli.stdout.split("\n").find((l) => l.startsWith(s.session_id))!;
    expect(line).toMatch(/\s4\s+\S+s\s+\S+s\s+25%/);
  });
});

describe.skipIf(!BACKEND)("operator prices and retention", () => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: BACKEND!, CLAUDE_SESSIONS_HISTORY_KEEP: "3" });
    const prices = join(w.root, "prices.json");
    writeFileSync(prices, JSON.stringify({ "claude-unknown-*": { input: 1, output: 2, cache_write: 1.25, cache_read: 0.1 } }));
    m = await connect(w, { CLAUDE_SESSIONS_PRICES: prices });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("CLAUDE_SESSIONS_PRICES prices a model the table does not know (by prefix): the budget is enforced with it", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("priced"), model: "claude-unknown-9", max_budget_usd: 0.00003 });
    const t = await m.callOk("send_message", { session_id: s.session_id, message: "hello", wait_for_usage: true });
    const cost = Math.round(12 * 1 + out("FAKE REPLY: hello") * 2) / 1e6;
    expect(t).toMatchObject({ cost_usd: cost, cost_complete: true, session_cost_usd: cost, session_cost_complete: true });
    await m.callOk("send_message", { session_id: s.session_id, message: "more" });
    const refused = await m.call("send_message", { session_id: s.session_id, message: "over" });
    expect(refused.error?.code).toBe("LIMIT_REACHED");
    expect(refused.error?.message).toContain("$0.00003");
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("CLAUDE_SESSIONS_HISTORY_KEEP bounds the execution history to the newest records", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("keep") });
    for (const msg of ["a", "b", "c", "d", "e"]) await m.callOk("send_message", { session_id: s.session_id, message: msg });
    const ex = await until(async () => {
      const r = await executions(m, s.session_id);
      return r.executions[0]?.prompt === "e" ? r : undefined;
    }, 5000);
    expect(ex.total_count).toBe(3);
    expect(ex.executions.map((e) => e.prompt)).toEqual(["e", "d", "c"]);
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("a bad price file stops the server at start, naming the entry", () => {
    const bad = join(w.root, "bad-prices.json");
    writeFileSync(bad, JSON.stringify({ "claude-x": { input: 1, output: -2, cache_write: 1, cache_read: 0.1 } }));
    const r = spawnSync(process.execPath, [CLI], {
      env: { ...w.env, CLAUDE_SESSIONS_PRICES: bad },
      encoding: "utf8",
      timeout: 20_000,
      input: "",
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("claude-x.output");
    expect(r.stderr).toContain("CLAUDE_SESSIONS_PRICES");
  });
});

/**
 * Issue 31: budgets bind every way work arrives, through the built server and the fake claude (whose transcript
 * usage is scripted: input 12, output ceil(reply/4) tokens of claude-opus-4-8 at $5/$25 per M; FAKE_SPEND:<n> writes
 * a step of n output tokens mid-turn). A queued prompt is checked when it is delivered, not when it is queued; a
 * session holds at most CLAUDE_SESSIONS_MAX_QUEUE; a tmux/pty turn that crosses its budget is interrupted; a
 * budgeted lead's teammates share its budget; a member's prompts to teammates are rate-limited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { promptsOf } from "../helpers/events.js";
import { connect, hasPty, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { connectMember, type Member } from "../helpers/members.js";

const TMUX = tmuxOrSkip();
const KINDS = [...(TMUX ? (["tmux"] as const) : []), ...((await hasPty()) ? (["pty"] as const) : [])];
const costOf = (reply: string) => (12 * 5 + Math.max(1, Math.ceil(reply.length / 4)) * 25) / 1e6;

describe.runIf(KINDS.length > 0)("budgets bind queued prompts, turns, teammates and members", () => {
  let w: World;
  let m: Mcp;
  const members: Member[] = [];
  const turnsOf = async (id: string) =>
    (await m.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.turn_count;

  beforeAll(async () => {
    w = makeWorld({
      CLAUDE_SESSIONS_BACKEND: KINDS[0]!,
      CLAUDE_SESSIONS_MAX_QUEUE: "3",
      CLAUDE_SESSIONS_MEMBER_MESSAGES_PER_MIN: "3",
    });
    m = await connect(w);
  });
  afterAll(async () => {
    for (const mb of members) await mb.close().catch(() => {});
    await m?.close();
    w?.cleanup();
  });

  it("prompts queued during a turn are checked when they are delivered: the spent budget refuses them all, each audited and recorded", async () => {
    const first = "FAKE_SLOW:4000 first";
    // The first turn alone costs more than the budget; nothing is spent yet when the prompts are queued.
    const s = await m.callOk("start_session", { cwd: w.dir("queued"), max_budget_usd: costOf(`FAKE REPLY: ${first}`) / 2 });
    const since = new Date();
    await m.callOk("send_message", { session_id: s.session_id, message: first, wait_for_response: false });
    const queued = [];
    for (const n of [1, 2])
      queued.push(
        await m.callOk("send_message", {
          session_id: s.session_id,
          message: `queued ${n}`,
          queue: true,
          wait_for_response: false,
        }),
      );
    for (const q of queued) expect(q).toMatchObject({ message_sent: true, queued: true });
    // One caller waits on its queued prompt: it gets the refusal, typed.
    const waited = await m.call("send_message", {
      session_id: s.session_id,
      message: "queued 3",
      queue: true,
      timeout_ms: 30_000,
    });
    expect(waited.error?.code).toBe("LIMIT_REACHED");
    expect(waited.error?.message).toMatch(/has spent its budget/);
    const refusals = await until(async () => {
      const l = (await readAudit(w.stateDir, since)).filter((x) => x.actor === "server:queue" && x.session_id === s.session_id);
      return l.length === 3 ? l : undefined;
    }, 10_000);
    for (const l of refusals) expect(l).toMatchObject({ tool: "send_message", outcome: "error", error_code: "LIMIT_REACHED" });
    // Only the first prompt ever reached Claude: one turn, one paid request.
    expect(promptsOf(w.stateDir, s.session_id)).toEqual([first]);
    expect(await turnsOf(s.session_id)).toBe(1);
    const ex = await m.callOk("get_execution_history", { session_id: s.session_id });
    expect(
      ex.executions
        .filter((e) => e.outcome === "refused")
        .map((e) => e.prompt)
        .sort(),
    ).toEqual(["queued 1", "queued 2", "queued 3"]);
    await m.callOk("kill_session", { session_id: s.session_id });
  }, 60_000);

  it("a session holds at most CLAUDE_SESSIONS_MAX_QUEUE queued prompts: the next is QUEUE_FULL; the held ones run after the turn", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("full") });
    await m.callOk("send_message", { session_id: s.session_id, message: "FAKE_SLOW:4000 long", wait_for_response: false });
    // A caller that waits less than the turn ahead takes: timed out, and its prompt stays queued.
    const short = await m.callOk("send_message", { session_id: s.session_id, message: "held 1", queue: true, timeout_ms: 300 });
    expect(short).toMatchObject({ queued: true, timed_out: true, completed: false });
    for (const n of [2, 3])
      expect(
        await m.callOk("send_message", { session_id: s.session_id, message: `held ${n}`, queue: true, wait_for_response: false }),
      ).toMatchObject({ queued: true });
    const full = await m.call("send_message", {
      session_id: s.session_id,
      message: "one too many",
      queue: true,
      wait_for_response: false,
    });
    expect(full.error).toMatchObject({ code: "QUEUE_FULL", retryable: true, details: { queued: 3, max_queue: 3 } });
    // Delivered one after another once the turn ended, each its own turn, in order; the refused one never.
    await until(async () => (await turnsOf(s.session_id)) === 4, 30_000);
    expect(promptsOf(w.stateDir, s.session_id)).toEqual(["FAKE_SLOW:4000 long", "held 1", "held 2", "held 3"]);
    await m.callOk("kill_session", { session_id: s.session_id });
  }, 60_000);

  it.each(KINDS)(
    "a %s turn that crosses max_budget_usd is interrupted mid-turn; the next prompt is LIMIT_REACHED",
    async (backend) => {
      const s = await m.callOk("start_session", { cwd: w.dir(`spend-${backend}`), backend, max_budget_usd: 0.05 });
      const since = new Date();
      // A step of 20,000 output tokens ($0.50) lands in the transcript, then the turn would go on for 40 s.
      const r = await m.callOk("send_message", {
        session_id: s.session_id,
        message: "FAKE_SPEND:20000 FAKE_SLOW:40000 go",
        timeout_ms: 30_000,
      });
      expect(r).toMatchObject({ completed: true, timed_out: false, turn_outcome: "interrupted" });
      expect(r.waited_ms).toBeLessThan(20_000);
      const audit = await until(async () => {
        const l = (await readAudit(w.stateDir, since)).filter(
          (x) => x.session_id === s.session_id && x.actor === "server:budget",
        );
        return l.length ? l : undefined;
      }, 10_000);
      expect(audit).toEqual([expect.objectContaining({ tool: "interrupt_session", outcome: "ok" })]);
      const refused = await m.call("send_message", { session_id: s.session_id, message: "more" });
      expect(refused.error?.code).toBe("LIMIT_REACHED");
      const listed = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id)!;
      expect(listed.limit_reached).toMatch(/max_budget_usd/);
      await m.callOk("kill_session", { session_id: s.session_id });
    },
    60_000,
  );

  it("a budgeted lead's teammate gets what is left of its budget, and the teammate's spend counts against the lead's", async () => {
    const cwd = w.dir("pool");
    const budget = 0.0005;
    const lead = await m.callOk("start_session", {
      cwd,
      team_name: "pool",
      teammate_name: "lead",
      team_lead: true,
      max_budget_usd: budget,
    });
    await m.callOk("send_message", { session_id: lead.session_id, message: "hello" });
    const leadCost = costOf("FAKE REPLY: hello");
    const a = await connectMember(w.stateDir, lead.session_id);
    members.push(a);
    const t = await a.call("start_teammate", { teammate_name: "helper" });
    expect(t.ok).toBe(true);
    const listed = (await m.callOk("list_sessions", { team_filter: "pool" })).sessions.find(
      (x) => x.session_id === t.data.session_id,
    )!;
    expect(listed.max_budget_usd).toBeCloseTo(budget - leadCost, 6);
    // The teammate's turn costs more than the lead has left; the lead's own spend is still under its budget.
    const ask = "please write the longest possible answer to this question now";
    const r = await a.call("message_teammate", { teammate_name: "helper", message: ask, wait_for_response: true });
    expect(r.data).toMatchObject({ completed: true });
    expect(leadCost).toBeLessThan(budget);
    const refused = await until(async () => {
      const x = await m.call("send_message", { session_id: lead.session_id, message: "next" });
      return x.error ? x : undefined;
    }, 10_000);
    expect(refused.error?.code).toBe("LIMIT_REACHED");
    expect(refused.error?.message).toMatch(/team budget of its lead/);
    // No teammate starts from a spent pool.
    const none = await a.call("start_teammate", { teammate_name: "another" });
    expect(none.error?.code).toBe("LIMIT_REACHED");
    // A resume's message does not travel with the launch past a spent pool either.
    await m.callOk("kill_session", { session_id: lead.session_id });
    const resumed = await m.call("resume_session", { session_id: lead.session_id, message: "again" });
    expect(resumed.error?.code).toBe("LIMIT_REACHED");
    expect(promptsOf(w.stateDir, lead.session_id)).not.toContain("again");
    await m.callOk("kill_session", { session_id: t.data.session_id as string });
    await m.callOk("kill_session", { session_id: lead.session_id });
  }, 90_000);

  it("a member's prompts to teammates are rate-limited: RATE_LIMITED with retry_after_ms, nothing sent", async () => {
    const cwd = w.dir("rate");
    const x = await m.callOk("start_session", { cwd, team_name: "rate", teammate_name: "x" });
    const y = await m.callOk("start_session", { cwd, team_name: "rate", teammate_name: "y" });
    const mx = await connectMember(w.stateDir, x.session_id);
    members.push(mx);
    for (const n of [1, 2, 3])
      expect((await mx.call("message_teammate", { teammate_name: "y", message: `note ${n}`, wait_for_response: false })).ok).toBe(
        true,
      );
    const limited = await mx.call("message_teammate", { teammate_name: "y", message: "note 4", wait_for_response: false });
    expect(limited.error?.code).toBe("RATE_LIMITED");
    const details = (limited.error as { details?: { retry_after_ms?: number } }).details;
    expect(details?.retry_after_ms).toBeGreaterThan(0);
    expect(details?.retry_after_ms).toBeLessThanOrEqual(60_000);
    const handoff = await mx.call("handoff", { to: "y", summary: "done with part one" });
    expect(handoff.error?.code).toBe("RATE_LIMITED");
    // A hand-off to no one sends no prompt: not limited.
    expect((await mx.call("handoff", { summary: "for the record" })).ok).toBe(true);
    await until(async () => (await turnsOf(y.session_id)) === 3, 30_000).catch(async (e) => {
      console.log(
        promptsOf(w.stateDir, y.session_id),
        await turnsOf(y.session_id),
        JSON.stringify((await readAudit(w.stateDir)).slice(-8)),
      );
      throw e;
    });
    expect(promptsOf(w.stateDir, y.session_id).filter((p) => p.includes("note 4") || p.includes("part one"))).toEqual([]);
    await m.callOk("kill_session", { session_id: x.session_id });
    await m.callOk("kill_session", { session_id: y.session_id });
  }, 60_000);
});

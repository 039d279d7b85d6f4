/**
 * Issue 37: a schedule that sends to a named long-lived session (send_to) instead of starting a run_task. The built
 * server over stdio (headless sessions of the fake claude), the scheduler looking every 200 ms: each run is
 * send_message to that session as `schedule:<name>` (the audit line), recorded like a run (outcome, the session,
 * cost, duration); the session busy with another turn → the run is skipped (overlap skip) or waits its turn (overlap
 * queue); the session's budget refuses a run once spent; a team address works; bad input is a typed error.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduleView } from "../../src/api/schedules.js";
import { CLI, connect, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";

const TICK = { CLAUDE_SESSIONS_SCHEDULE_TICK_MS: "200" };

async function schedule(m: Mcp, name: string): Promise<ScheduleView> {
  return (await m.callOk("list_schedules", { name })).schedules[0]!;
}

function audit(w: World, tool: string): Array<{ actor: string; session_id?: string }> {
  let text = "";
  try {
    text = readFileSync(join(w.stateDir, "audit.jsonl"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string; actor: string; session_id?: string })
    .filter((l) => l.tool === tool);
}

describe("schedules that send to a session (send_to)", () => {
  let w: World;
  let m: Mcp;

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless", ...TICK });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("each run is send_message to that session as schedule:<name>, recorded with outcome, cost and duration", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("a"), backend: "headless" });
    const made = await m.callOk("schedule_task", {
      name: "nudge",
      every: "2s",
      send_to: { session_id: s.session_id },
      prompt: "scheduled nudge",
    });
    expect(made.schedule).toMatchObject({ name: "nudge", send_to: { session_id: s.session_id }, runs: [] });
    expect(made.schedule.cwd).toBeUndefined();
    await until(async () => (await schedule(m, "nudge")).runs.some((r) => r.outcome === "completed"), 30_000);
    await m.callOk("change_schedule", { name: "nudge", action: "pause" });
    const run = (await schedule(m, "nudge")).runs.find((r) => r.outcome === "completed")!;
    expect(run.session_id).toBe(s.session_id);
    expect(run.cost_usd).toBeGreaterThan(0);
    expect(run.duration_ms).toBeGreaterThan(0);
    expect(audit(w, "send_message").map((l) => l.actor)).toContain("schedule:nudge");
    expect(audit(w, "run_task").map((l) => l.actor)).not.toContain("schedule:nudge");
    // No session was started for it: the one session has the turn.
    const list = await m.callOk("list_sessions", { status_filter: "all" });
    expect(list.sessions).toHaveLength(1);
    expect(list.sessions[0]!.turn_count).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("a team address works; the session busy → skipped (overlap skip) or queued after its turn (overlap queue)", async () => {
    const skipS = await m.callOk("start_session", {
      cwd: w.dir("b"),
      backend: "headless",
      team_name: "crew",
      teammate_name: "skipper",
    });
    const queueS = await m.callOk("start_session", {
      cwd: w.dir("c"),
      backend: "headless",
      team_name: "crew",
      teammate_name: "queuer",
    });
    // Busy with a long turn of another client's.
    for (const id of [skipS.session_id, queueS.session_id])
      await m.callOk("send_message", { session_id: id, message: "FAKE_SLOW:4000 long", wait_for_response: false });
    await m.callOk("schedule_task", {
      name: "busy-skip",
      at: new Date(Date.now() + 800).toISOString(),
      send_to: { team_name: "crew", teammate_name: "skipper" },
      prompt: "while busy",
    });
    await m.callOk("schedule_task", {
      name: "busy-queue",
      at: new Date(Date.now() + 800).toISOString(),
      overlap: "queue",
      send_to: { team_name: "crew", teammate_name: "queuer" },
      prompt: "after your turn",
    });
    await until(
      async () =>
        (await schedule(m, "busy-skip")).runs.some((r) => r.outcome !== "running") &&
        (await schedule(m, "busy-queue")).runs.some((r) => r.outcome !== "running"),
      40_000,
    );
    const skip = (await schedule(m, "busy-skip")).runs[0]!;
    expect(skip).toMatchObject({ outcome: "skipped", error_code: "SESSION_BUSY", reason: expect.stringMatching(/busy/) });
    const queued = (await schedule(m, "busy-queue")).runs[0]!;
    expect(queued).toMatchObject({ outcome: "completed", session_id: queueS.session_id });
    // It waited for the other turn: it ended after the 4 s turn ahead of it.
    expect(queued.duration_ms).toBeGreaterThan(2_000);
  }, 60_000);

  it("obeys the session's budget: once spent, a run is refused (LIMIT_REACHED) and nothing is sent", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("d"), backend: "headless", max_budget_usd: 0.000001 });
    await m.callOk("send_message", { session_id: s.session_id, message: "spend it", wait_for_usage: true });
    const turns = (await m.callOk("list_sessions", { status_filter: "all" })).sessions.find(
      (x) => x.session_id === s.session_id,
    )!.turn_count;
    await m.callOk("schedule_task", {
      name: "broke",
      at: new Date(Date.now() + 500).toISOString(),
      send_to: { session_id: s.session_id },
      prompt: "more",
    });
    await until(async () => (await schedule(m, "broke")).runs.some((r) => r.outcome !== "running"), 30_000);
    expect((await schedule(m, "broke")).runs[0]).toMatchObject({ outcome: "error", error_code: "LIMIT_REACHED" });
    expect(
      (await m.callOk("list_sessions", { status_filter: "all" })).sessions.find((x) => x.session_id === s.session_id)!.turn_count,
    ).toBe(turns);
  }, 60_000);

  it("claude-sessions schedule add --send-to makes one; list shows the session it sends to", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("f"), backend: "headless" });
    const cli = (args: string[]) =>
      spawnSync(process.execPath, [CLI, "schedule", ...args], { env: w.env, encoding: "utf8", timeout: 60_000 });
    const add = cli(["add", "from-shell", "--every", "1h", "--send-to", s.session_id, "--prompt", "hi"]);
    expect(add.status, add.stderr).toBe(0);
    expect((await schedule(m, "from-shell")).send_to).toEqual({ session_id: s.session_id });
    const list = cli(["list", "from-shell"]);
    expect(list.stdout).toContain(`→ ${s.session_id}`);
    expect(list.stdout).not.toContain("undefined");
  }, 60_000);

  it("bad input is a typed error and stores nothing", async () => {
    const before = (await m.callOk("list_schedules", {})).schedules.length;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: "no-cwd", every: "5m", prompt: "x" }, /cwd/],
      [{ name: "with-model", every: "5m", prompt: "x", send_to: { session_id: "s1" }, model: "opus" }, /model cannot be given/],
      [{ name: "with-cwd", every: "5m", prompt: "x", send_to: { session_id: "s1" }, cwd: w.dir("e") }, /cwd cannot be given/],
      [{ name: "both-forms", every: "5m", prompt: "x", send_to: { session_id: "s1", team_name: "crew" } }, /send_to/],
      [{ name: "half-team", every: "5m", prompt: "x", send_to: { team_name: "crew" } }, /send_to/],
    ];
    for (const [args, why] of cases) {
      const r = await m.callRaw("schedule_task", args);
      expect(r.ok, JSON.stringify(args)).toBe(false);
      expect(r.error!.code, JSON.stringify(args)).toBe("INVALID_ARGUMENT");
      expect(r.error!.message, JSON.stringify(args)).toMatch(why);
    }
    expect((await m.callOk("list_schedules", {})).schedules).toHaveLength(before);
  }, 30_000);
});

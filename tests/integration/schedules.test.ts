/**
 * Issue 37 item 1: schedules. The built server over stdio (headless sessions of the fake claude), the scheduler
 * looking every 200 ms: a schedule fires run_task as `schedule:<name>` (the audit line), its run is recorded with
 * outcome, session, cost and duration and reaches a webhook as schedule.finished; a run still going when the next
 * is due is skipped (overlap skip) or queued once (overlap queue); schedules made while no server ran catch up once
 * (several missed times are one run) or are skipped (catch_up skip), and doctor says they would not fire meanwhile;
 * a paused one does not fire; two servers on one state directory run a due time once; bad input is a typed error
 * and nothing is stored.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduleView } from "../../src/api/schedules.js";
import { CLI, connect, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";
import { startReceiver, verified, type Receiver } from "../helpers/receiver.js";

const TICK = { CLAUDE_SESSIONS_SCHEDULE_TICK_MS: "200" };
const SECRET = "schedule-hook-secret-0123456789";

async function cli(w: World, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [CLI, ...args], { env: w.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  p.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  p.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const status = await new Promise<number | null>((res) => p.on("exit", (c) => res(c)));
  return { status, stdout, stderr };
}

async function schedule(m: Mcp, name: string): Promise<ScheduleView> {
  return (await m.callOk("list_schedules", { name })).schedules[0]!;
}

function auditActors(w: World, tool: string): string[] {
  let text = "";
  try {
    text = readFileSync(join(w.stateDir, "audit.jsonl"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string; actor: string })
    .filter((l) => l.tool === tool)
    .map((l) => l.actor);
}

describe("schedules", () => {
  let w: World;
  let hook: Receiver;
  let m: Mcp;

  beforeAll(async () => {
    hook = await startReceiver();
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless", ...TICK });
    const f = join(w.root, "webhooks.json");
    writeFileSync(f, JSON.stringify({ endpoints: [{ url: hook.url, events: ["schedule.finished"], secret: SECRET }] }), {
      mode: 0o600,
    });
    w.env.CLAUDE_SESSIONS_WEBHOOKS = f;
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    await hook?.close();
    w?.cleanup();
  });

  it("fires, records the run (outcome, session, cost, duration) as schedule:<name>, tells the webhook; paused it does not fire", async () => {
    const made = await m.callOk("schedule_task", { name: "every-2s", every: "2s", cwd: w.dir("s1"), prompt: "scheduled hello" });
    expect(made.schedule).toMatchObject({ name: "every-2s", every: "2s", paused: false, running: false, runs: [] });
    await until(async () => (await schedule(m, "every-2s")).runs.some((r) => r.outcome === "completed"), 30_000);
    const s = await schedule(m, "every-2s");
    const run = s.runs.find((r) => r.outcome === "completed")!;
    expect(run.session_id).toMatch(/\S/);
    expect(run.duration_ms).toBeGreaterThan(0);
    expect(run.cost_usd).toBeGreaterThan(0);
    expect(auditActors(w, "run_task")).toContain("schedule:every-2s");
    await until(() => hook.got.some((r) => r.json.schedule === "every-2s" && r.json.session_id === run.session_id), 15_000);
    const finished = hook.got.find((r) => r.json.schedule === "every-2s" && r.json.session_id === run.session_id)!;
    expect(finished.json).toMatchObject({
      event: "schedule.finished",
      schedule: "every-2s",
      session_id: run.session_id,
      outcome: "completed",
      due_at: run.due_at,
    });
    expect(verified(SECRET, finished)).toBe(true);
    expect(finished.body).not.toContain("scheduled hello");

    const paused = await m.callOk("change_schedule", { name: "every-2s", action: "pause" });
    expect(paused.schedule).toMatchObject({ paused: true, next_at: null });
    await until(async () => !(await schedule(m, "every-2s")).running, 30_000);
    const count = (await schedule(m, "every-2s")).runs.length;
    // About time passing: a paused schedule stays quiet over more than one interval.
    await new Promise((r) => setTimeout(r, 4_500));
    expect((await schedule(m, "every-2s")).runs.length).toBe(count);
    const resumed = await m.callOk("change_schedule", { name: "every-2s", action: "resume" });
    expect(resumed.schedule!.next_at).not.toBeNull();
    await m.callOk("change_schedule", { name: "every-2s", action: "delete" });
    expect((await m.callOk("list_schedules", {})).schedules.map((x) => x.name)).not.toContain("every-2s");
  }, 90_000);

  it("a run still going when the next is due is skipped (overlap skip), or queued once (overlap queue)", async () => {
    await m.callOk("schedule_task", { name: "slow-skip", every: "1s", cwd: w.dir("s2"), prompt: "FAKE_SLOW:3500 slow" });
    await m.callOk("schedule_task", {
      name: "slow-queue",
      every: "1s",
      overlap: "queue",
      cwd: w.dir("s3"),
      prompt: "FAKE_SLOW:3500 slow",
    });
    await until(
      async () =>
        (await schedule(m, "slow-skip")).runs.some((r) => r.outcome === "completed") &&
        (await schedule(m, "slow-queue")).runs.filter((r) => r.outcome === "completed").length >= 2,
      60_000,
    );
    for (const n of ["slow-skip", "slow-queue"]) await m.callOk("change_schedule", { name: n, action: "pause" });
    const skip = await schedule(m, "slow-skip");
    const skipped = skip.runs.filter((r) => r.outcome === "skipped");
    expect(skipped.length).toBeGreaterThanOrEqual(2);
    expect(skipped[0]!.reason).toMatch(/still going/);
    // Never two at once: each run started after the one before it ended.
    const ran = (x: ScheduleView) => x.runs.filter((r) => r.started_at && r.ended_at);
    for (const x of [skip, await schedule(m, "slow-queue")]) {
      const r = ran(x);
      for (let i = 1; i < r.length; i++)
        expect(Date.parse(r[i]!.started_at!)).toBeGreaterThanOrEqual(Date.parse(r[i - 1]!.ended_at!));
    }
    const queue = await schedule(m, "slow-queue");
    expect(queue.runs.filter((r) => r.outcome === "skipped")).toHaveLength(0);
  }, 90_000);

  it("catches up once after downtime (several missed times are one run), or skips, per catch_up; doctor says they would not fire", async () => {
    await m.close();
    const v = w.dir("s4");
    expect((await cli(w, ["schedule", "add", "missed-once", "--every", "2s", "--cwd", v, "--prompt", "catch up"])).status).toBe(
      0,
    );
    expect(
      (
        await cli(w, [
          "schedule",
          "add",
          "missed-skip",
          "--every",
          "2s",
          "--cwd",
          v,
          "--prompt",
          "catch up",
          "--catch-up",
          "skip",
        ])
      ).status,
    ).toBe(0);
    const file = () =>
      JSON.parse(readFileSync(join(w.stateDir, "schedules.json"), "utf8")) as { schedules: Record<string, { next_at: number }> };
    const firstDue = file().schedules["missed-once"]!.next_at;
    // About time passing: no server runs while three due times go by.
    await new Promise((r) => setTimeout(r, Math.max(0, firstDue + 4_500 - Date.now())));
    const doc = await cli(w, ["doctor"]);
    expect(doc.stdout).toMatch(/schedules: \d+ active schedule\(s\) would not fire: no server runs them/);
    const started = Date.now();
    m = await connect(w);
    await until(
      async () =>
        (await schedule(m, "missed-once")).runs.some((r) => r.outcome === "completed") &&
        (await schedule(m, "missed-skip")).runs.length > 0,
      30_000,
    );
    for (const n of ["missed-once", "missed-skip"]) await m.callOk("change_schedule", { name: n, action: "pause" });
    const once = await schedule(m, "missed-once");
    const beforeStart = once.runs.filter((r) => Date.parse(r.due_at) < started);
    expect(beforeStart).toHaveLength(1);
    expect(beforeStart[0]!.due_at).toBe(new Date(firstDue).toISOString());
    expect(beforeStart[0]!.outcome).not.toBe("skipped");
    const skip = await schedule(m, "missed-skip");
    expect(skip.runs[0]).toMatchObject({ outcome: "skipped", reason: expect.stringMatching(/no server ran/) });
    expect(skip.runs.filter((r) => Date.parse(r.due_at) < started)).toHaveLength(1);
  }, 90_000);

  it("two servers on one state directory run a due time once", async () => {
    const other = await connect(w);
    try {
      const at = new Date(Date.now() + 2_000).toISOString();
      await m.callOk("schedule_task", { name: "at-once", at, cwd: w.dir("s5"), prompt: "only once" });
      await until(async () => (await schedule(m, "at-once")).runs.some((r) => r.outcome === "completed"), 30_000);
      // About time passing: the other server's ticks come and go.
      await new Promise((r) => setTimeout(r, 1_000));
      const s = await schedule(other, "at-once");
      expect(s.runs).toHaveLength(1);
      expect(s.next_at).toBeNull();
      expect(auditActors(w, "run_task").filter((a) => a === "schedule:at-once")).toHaveLength(1);
    } finally {
      await other.close();
    }
  }, 60_000);

  it("bad input is a typed error and stores nothing", async () => {
    const cwd = w.dir("s6");
    const before = (await m.callOk("list_schedules", {})).schedules.length;
    await m.callOk("schedule_task", { name: "taken", cron: "0 7 * * 1-5", cwd, prompt: "x" });
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ name: "bad-cron", cron: "not a cron", cwd, prompt: "x" }, "INVALID_ARGUMENT", /does not parse/],
      [{ name: "past", at: "2020-01-01T00:00:00Z", cwd, prompt: "x" }, "INVALID_ARGUMENT", /in the past/],
      [{ name: "taken", every: "5m", cwd, prompt: "x" }, "ALREADY_EXISTS", /exists/],
      [{ name: "two-kinds", every: "5m", cron: "* * * * *", cwd, prompt: "x" }, "INVALID_ARGUMENT", /exactly one/],
      [{ name: "none", cwd, prompt: "x" }, "INVALID_ARGUMENT", /exactly one/],
      [{ name: "too-often", every: "100ms", cwd, prompt: "x" }, "INVALID_ARGUMENT", /shorter than/],
      [{ name: "with-env", every: "5m", cwd, prompt: "x", env: { TOKEN: "s3cret" } }, "INVALID_ARGUMENT", /env/],
      [{ name: "bad name!", every: "5m", cwd, prompt: "x" }, "INVALID_ARGUMENT", /name/],
      [{ name: "no-prompt", every: "5m", cwd }, "INVALID_ARGUMENT", /prompt/],
    ];
    for (const [args, code, why] of cases) {
      const r = await m.callRaw("schedule_task", args);
      expect(r.ok, JSON.stringify(args)).toBe(false);
      expect(r.error!.code, JSON.stringify(args)).toBe(code);
      expect(r.error!.message, JSON.stringify(args)).toMatch(why);
    }
    // A gate is met when the run starts, like a direct run_task's: without CLAUDE_SESSIONS_ALLOW_BYPASS, refused.
    await m.callOk("schedule_task", {
      name: "gated",
      at: new Date(Date.now() + 1_000).toISOString(),
      cwd,
      prompt: "x",
      permission_mode: "bypassPermissions",
    });
    await until(async () => (await schedule(m, "gated")).runs.some((x) => x.outcome !== "running"), 30_000);
    expect((await schedule(m, "gated")).runs[0]).toMatchObject({ outcome: "error", error_code: "PERMISSION_DENIED" });
    expect(auditActors(w, "run_task")).toContain("schedule:gated");
    const r = await m.callRaw("change_schedule", { name: "no-such", action: "pause" });
    expect(r.error?.code).toBe("INVALID_ARGUMENT");
    const names = (await m.callOk("list_schedules", {})).schedules.map((s) => s.name);
    expect(names).toHaveLength(before + 2);
    expect(readFileSync(join(w.stateDir, "schedules.json"), "utf8")).not.toContain("s3cret");
  }, 60_000);
});

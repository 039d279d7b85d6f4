/**
 * Issue 37's pure parts and the scheduler with a clock the test moves: the Stripe-style signature (a receiver's check
 * rejects a changed body, another secret, an old time), back-off with jitter inside its bounds, timing parse errors,
 * several missed times collapsing into one, catch-up once/skip on a server's first look, overlap skip/queue, a paused
 * schedule not firing; which session changes are which webhook events and what their bodies leave out.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSchedule, changeSchedule } from "../../src/automations/schedules/create.js";
import { nextFrom, Scheduler, type RunResult } from "../../src/automations/schedules/scheduler.js";
import { ScheduleStore } from "../../src/automations/schedules/store.js";
import { checkTiming, nextAfter } from "../../src/automations/schedules/timing.js";
import type { Endpoint } from "../../src/automations/webhooks/config.js";
import { backoffMs } from "../../src/automations/webhooks/delivery.js";
import { webhookOf } from "../../src/automations/webhooks/events.js";
import { signatureOf, verifySignature } from "../../src/automations/webhooks/sign.js";
import { scheduleTaskInput } from "../../src/api/schedules.js";
import { initialFold } from "../../src/events/reducer.js";
import type { SessionChange } from "../../src/sessions/service.js";
import { createLogger } from "../../src/util/log.js";

const log = createLogger({ level: "error" });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("webhook signature and back-off", () => {
  it("signs t.<body> with HMAC-SHA256 and the receiver's check holds only for that body, secret and a recent time", () => {
    const body = '{"event":"turn.ended"}';
    const sig = signatureOf("s3cret-0123456789abcdef", body, 1_700_000_000);
    expect(sig).toBe(
      `t=1700000000,v1=${createHmac("sha256", "s3cret-0123456789abcdef").update(`1700000000.${body}`).digest("hex")}`,
    );
    expect(verifySignature("s3cret-0123456789abcdef", body, sig, 1_700_000_100)).toBe(true);
    expect(verifySignature("s3cret-0123456789abcdef", body + " ", sig, 1_700_000_100)).toBe(false);
    expect(verifySignature("another-0123456789abcdef", body, sig, 1_700_000_100)).toBe(false);
    expect(verifySignature("s3cret-0123456789abcdef", body, sig, 1_700_000_000 + 301)).toBe(false);
  });

  it("waits base × 2^(n−1), capped, with half of it random", () => {
    const ep = { retry: { attempts: 6, baseMs: 100, maxMs: 1_000 } } as Endpoint;
    expect(backoffMs(ep, 1, () => 0)).toBe(50);
    expect(backoffMs(ep, 1, () => 1)).toBe(100);
    expect(backoffMs(ep, 3, () => 1)).toBe(400);
    expect(backoffMs(ep, 10, () => 1)).toBe(1_000);
    expect(backoffMs(ep, 10, () => 0)).toBe(500);
  });
});

describe("webhook events of session changes", () => {
  const change = (c: Omit<Partial<SessionChange>, "fold"> & { fold?: Partial<SessionChange["fold"]> }): SessionChange =>
    ({ session_id: "s1", status: "idle", events: [], ...c, fold: { ...initialFold(), ...c.fold } }) as SessionChange;

  it("turn.ended carries the outcome; the reply only as text (include_text)", () => {
    const n = webhookOf(
      change({
        previous: "busy",
        status: "idle",
        fold: { last_turn: "completed", turn_count: 1, last_response: "the answer", last_prompt: "the prompt" },
      }),
    )!;
    expect(n.event).toBe("turn.ended");
    expect(n.fields).toMatchObject({ session_id: "s1", turn_outcome: "completed" });
    expect(JSON.stringify(n.fields)).not.toMatch(/the answer|the prompt/);
    expect(n.text).toEqual({ response: "the answer" });
  });

  it("a permission and a blocking screen need you; a usage-limit screen and a limited status are session.limited; an end is session.died", () => {
    const perm = webhookOf(
      change({
        previous: "busy",
        status: "waiting_for_permission",
        fold: { pending_permission: { tool_name: "Bash", tool_input: { command: "rm -rf x" } } as never },
      }),
    )!;
    expect(perm).toMatchObject({ event: "session.needs_you", fields: { kind: "permission", tool_name: "Bash" } });
    expect(JSON.stringify(perm.fields)).not.toContain("rm -rf");
    const screen = (kind: string) =>
      webhookOf(
        change({
          previous: "busy",
          status: "blocked",
          fold: { blocked: { kind, text: "What do you want to do?", choices: ["Wait"], seq: 1 } as never },
        }),
      )!;
    expect(screen("question").event).toBe("session.needs_you");
    expect(screen("usage_limit").event).toBe("session.limited");
    expect(webhookOf(change({ previous: "busy", status: "limited" as never }))!.event).toBe("session.limited");
    expect(webhookOf(change({ previous: "idle", status: "dead", fold: { exit_code: 1 } }))).toMatchObject({
      event: "session.died",
      fields: { exit_code: 1 },
    });
    expect(webhookOf(change({ previous: "idle", status: "idle" }))).toBeUndefined();
  });
});

describe("schedule timing", () => {
  it("refuses a cron that does not parse, an `at` in the past, none or two kinds, a too short interval", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(() => checkTiming({ cron: "61 * * * *" }, now)).toThrow(/does not parse/);
    expect(() => checkTiming({ at: "2029-12-31T23:59:59Z" }, now)).toThrow(/in the past/);
    expect(() => checkTiming({ at: "tomorrow" }, now)).toThrow(/not an ISO time/);
    expect(() => checkTiming({}, now)).toThrow(/exactly one/);
    expect(() => checkTiming({ every: "5m", cron: "* * * * *" }, now)).toThrow(/exactly one/);
    expect(() => checkTiming({ every: "500ms" }, now)).toThrow(/shorter than/);
    expect(() => checkTiming({ cron: "*/5 * * * *" }, now)).not.toThrow();
  });

  it("several missed times of an interval are one: the next is the first after now, on the schedule's beat", () => {
    const s = { every: "10s" } as never;
    expect(nextFrom(s, 1_000, 35_500)).toBe(41_000);
    expect(nextAfter({ at: "2030-01-01T00:00:00Z" }, Date.parse("2030-01-01T00:00:00Z"))).toBeNull();
  });
});

describe("the scheduler with a clock the test moves", () => {
  function world() {
    const d = mkdtempSync(join(tmpdir(), "cs-sched-"));
    dirs.push(d);
    let now = Date.parse("2030-01-01T00:00:00Z");
    const calls: string[] = [];
    const pending: Array<(r: RunResult) => void> = [];
    const store = new ScheduleStore(d, log);
    const make = () =>
      new Scheduler({
        store,
        log,
        now: () => now,
        tickMs: 1_000,
        run: (name) => {
          calls.push(name);
          return new Promise<RunResult>((res) => pending.push(res));
        },
      });
    return { store, calls, pending, make, advance: (ms: number) => (now += ms), now: () => now };
  }
  const add = (w: ReturnType<typeof world>, args: Record<string, unknown>) =>
    createSchedule(w.store, scheduleTaskInput.parse({ cwd: "/tmp", prompt: "p", ...args }), w.now());

  it("fires when due, records the run, skips a time due while it runs (overlap skip), queues one (overlap queue)", async () => {
    const w = world();
    await add(w, { name: "a", every: "10s" });
    await add(w, { name: "q", every: "10s", overlap: "queue" });
    const s = w.make();
    await s.tick();
    expect(w.calls).toEqual([]);
    w.advance(10_000);
    await s.tick();
    expect(w.calls.sort()).toEqual(["a", "q"]);
    w.advance(10_000);
    await s.tick();
    expect(w.calls).toHaveLength(2);
    const f = await w.store.read();
    expect(f.schedules.a!.runs.map((r) => r.outcome)).toEqual(["running", "skipped"]);
    expect(f.schedules.q!.queued).toBe(true);
    for (const r of w.pending.splice(0)) r({ completed: true, turn_outcome: "completed", session_id: "x", cost_usd: 0.01 });
    await s.settled();
    await s.tick();
    expect(w.calls.filter((c) => c === "q")).toHaveLength(2);
    expect(w.calls.filter((c) => c === "a")).toHaveLength(1);
    expect((await w.store.read()).schedules.a!.runs[0]).toMatchObject({ outcome: "completed", session_id: "x", cost_usd: 0.01 });
  });

  it("a server's first look catches up once (catch_up once) or records a skip (catch_up skip); paused never fires", async () => {
    const w = world();
    await add(w, { name: "once", every: "10s" });
    await add(w, { name: "skip", every: "10s", catch_up: "skip" });
    await add(w, { name: "paused", every: "10s" });
    await changeSchedule(w.store, "paused", "pause", w.now());
    w.advance(55_000); // five due times with no server
    const s = w.make();
    await s.tick();
    expect(w.calls).toEqual(["once"]);
    const f = await w.store.read();
    expect(f.schedules.skip!.runs).toEqual([expect.objectContaining({ outcome: "skipped" })]);
    expect(f.schedules.once!.next_at).toBe(Date.parse("2030-01-01T00:01:00Z"));
    expect(f.schedules.paused!.runs).toEqual([]);
    for (const r of w.pending.splice(0)) r({ completed: true });
    await s.settled();
  });
});

describe("run claims (link(2))", () => {
  it("of 20 claims of one due time at once exactly one wins; another due time or schedule is a claim of its own", async () => {
    const d = mkdtempSync(join(tmpdir(), "cs-claims-"));
    dirs.push(d);
    const { RunClaims } = await import("../../src/automations/schedules/claims.js");
    const claims = Array.from({ length: 20 }, () => new RunClaims(join(d, "schedules.claims")));
    const won = await Promise.all(claims.map((c) => c.claim("nightly", 1_000)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await claims[0]!.claim("nightly", 2_000)).toBe(true);
    expect(await claims[1]!.claim("other", 1_000)).toBe(true);
    expect(await claims[2]!.claim("nightly", 2_000)).toBe(false);
  });
});

/**
 * The short form of the fault-injection suite (`npm run faults` is the long one, with a table): the same
 * scenarios from scripts/faults/, a few runs each, against the build in dist/ (npm test builds first).
 * Real processes, real tmux on private sockets, the fake claude; nothing of the user's is touched.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/harness.js";

interface Outcome {
  runs: number;
  failures: number;
  worstRecoveryMs: number;
  notes: string[];
}
type Scenario = (runs: number, opts?: unknown) => Promise<Outcome>;

async function scenarios(file: string): Promise<Record<string, Scenario>> {
  const path = join(ROOT, "scripts", "faults", file);
  return (await import(path)) as Record<string, Scenario>;
}

function expectClean(r: Outcome, runs: number): void {
  expect(r.notes).toEqual([]);
  expect(r.failures).toBe(0);
  expect(r.runs).toBe(runs);
}

describe("fault injection (short form)", () => {
  it("kill -9 of a process writing state.json at a random point: the file parses, no acknowledged update lost", async () => {
    expectClean(await (await scenarios("store-scenarios.mjs")).kill9Store!(2), 2);
  }, 60_000);

  it("SIGSTOP of the lock holder past the stale time while another works, then SIGCONT: both survive, nothing lost", async () => {
    expectClean(await (await scenarios("store-scenarios.mjs")).sigstopLock!(1), 1);
  }, 60_000);

  it("a hook killed mid-write: the next event still arrives whole", async () => {
    expectClean(await (await scenarios("store-scenarios.mjs")).hookKilled!(5), 5);
  }, 60_000);

  it("ENOSPC on the state directory: updates fail cleanly, state.json stays whole, writing resumes with space", async (ctx) => {
    const r = await (await scenarios("store-scenarios.mjs")).enospc!(1);
    if (r.runs === 0) {
      // Mounting a small tmpfs needs root: root must run it; elsewhere the test is reported skipped, with the reason.
      expect(process.getuid?.()).not.toBe(0);
      ctx.skip(r.notes.join("; "));
    }
    expectClean(r, 1);
  }, 60_000);

  it("four processes sending to one session through the send lock: no paste+Enter section overlaps", async () => {
    expectClean(await (await scenarios("store-scenarios.mjs")).sendLock!(1), 1);
  }, 60_000);

  it("kill -9 of the server under a 10-session workload: the next server adopts every session with its exact status", async () => {
    expectClean(await (await scenarios("server-scenarios.mjs")).kill9Server!(1), 1);
  }, 120_000);

  it("the tmux server killed under live sessions: the server survives, reports them dead, and resumes them", async () => {
    expectClean(await (await scenarios("server-scenarios.mjs")).tmuxKilled!(1, { resume: true }), 1);
  }, 90_000);

  it("two and four servers sending to the same sessions at once: every prompt delivered exactly once, none merged", async () => {
    const s = await scenarios("server-scenarios.mjs");
    expectClean(await s.serversSend!(1, 2), 1);
    expectClean(await s.serversSend!(1, 4), 1);
  }, 180_000);

  it("claude killed mid-turn: the waiting send_message returns with the session dead", async () => {
    expectClean(await (await scenarios("server-scenarios.mjs")).claudeKilled!(1), 1);
  }, 90_000);

  it("the wall clock jumps a day forward and back: waits end on time, no session is ended by its deadline", async () => {
    expectClean(await (await scenarios("server-scenarios.mjs")).clockJump!(1), 1);
  }, 90_000);
});

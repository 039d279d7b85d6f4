/**
 * Issue #24 pieces that need no session: the operator's price file (strict, by id or prefix, over the table), the
 * execution history's retention and metrics, which turn results are tool errors (health_check's backends:
 * components/health.test.ts).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ExecutionLog } from "../../src/history/executions.js";
import { readPriceFile } from "../../src/price-file.js";
import { turnFailure } from "../../src/server/tools/core/turn-failure.js";

const dir = mkdtempSync(join(tmpdir(), "cs-accounts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, body: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, typeof body === "string" ? body : JSON.stringify(body));
  return p;
};

describe("CLAUDE_SESSIONS_PRICES", () => {
  it("reads ids and prefixes (the longest prefix wins); cache_write_1h defaults to cache_write", () => {
    const p = readPriceFile(
      file("ok.json", {
        "my-model": { input: 1, output: 2, cache_write: 3, cache_read: 0.5 },
        "my-*": { input: 9, output: 9, cache_write: 9, cache_read: 9, cache_write_1h: 10 },
        "my-model-x*": { input: 4, output: 4, cache_write: 4, cache_read: 4 },
      }),
    );
    expect(p.exact.get("my-model")).toEqual({ input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 3, cache_read: 0.5 });
    expect(p.prefixes.map(([k]) => k)).toEqual(["my-model-x", "my-"]);
  });

  it.each([
    ["not JSON", "{", /not a readable JSON file/],
    ["a negative rate", { m: { input: -1, output: 1, cache_write: 1, cache_read: 1 } }, /m\.input/],
    ["a missing rate", { m: { input: 1, output: 1, cache_write: 1 } }, /m\.cache_read/],
    ["an unknown field", { m: { input: 1, output: 1, cache_write: 1, cache_read: 1, cache_writes: 1 } }, /cache_writes/],
    ["an upper-case key", { "Claude-X": { input: 1, output: 1, cache_write: 1, cache_read: 1 } }, /lower-case model id/],
    ["a rate as text", { m: { input: "1", output: 1, cache_write: 1, cache_read: 1 } }, /m\.input/],
  ])("refuses %s, naming the file and the entry", (_what, body, why) => {
    const p = file(`bad-${Math.random()}.json`, body);
    expect(() => readPriceFile(p)).toThrow(why);
    expect(() => readPriceFile(p)).toThrow(p);
  });

  it("is the operator's file, as nodes.json: one group or others can write, or another user owns, is refused", () => {
    const ok = { m: { input: 1, output: 1, cache_write: 1, cache_read: 1 } };
    const writable = file("writable.json", ok);
    chmodSync(writable, 0o664);
    expect(() => readPriceFile(writable)).toThrow(/cannot be trusted.*mode 664.*chmod 600/);
    chmodSync(writable, 0o646);
    expect(() => readPriceFile(writable)).toThrow(/cannot be trusted/);
    chmodSync(writable, 0o644);
    expect(readPriceFile(writable).exact.has("m")).toBe(true);
    if (process.getuid?.() === 0) {
      // As root a file given to another user stands for a file someone else owns.
      const foreign = file("foreign.json", ok);
      chownSync(foreign, 65534, 65534);
      expect(() => readPriceFile(foreign)).toThrow(/cannot be trusted.*uid 65534/);
    }
  });

  it("reads a regular file only, never blocking: a FIFO or a directory is refused at once; over 1 MiB is refused", () => {
    const fifo = join(dir, "prices.fifo");
    execFileSync("mkfifo", [fifo]);
    const t0 = Date.now();
    expect(() => readPriceFile(fifo)).toThrow(/a FIFO, not a regular file/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(() => readPriceFile(dir)).toThrow(/a directory, not a regular file/);
    const big = file("big.json", `{"m": {"input": 1, "output": 1, "cache_write": 1, "cache_read": 1}}${" ".repeat(1024 * 1024)}`);
    expect(() => readPriceFile(big)).toThrow(/over 1048576 bytes/);
  });
});

describe("execution history retention and metrics", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s));
  const usage = {
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 0,
    cache_creation_5m_input_tokens: 0,
    cache_creation_1h_input_tokens: 0,
    cache_read_input_tokens: 0,
  };

  it("keeps the newest `keep` records and none older than the age limit", () => {
    const log = new ExecutionLog(mkdtempSync(join(dir, "keep-")), { keep: 3, maxAgeMs: 0 });
    for (let i = 0; i < 5; i++)
      log.record({ session_id: "s", prompt: `p${i}`, started_at: at(i), ended_at: at(i + 1), outcome: "completed" });
    expect(log.list({ limit: 10 })).toMatchObject({
      total_count: 3,
      executions: [{ prompt: "p4" }, { prompt: "p3" }, { prompt: "p2" }],
    });
    log.close();
    const aged = new ExecutionLog(mkdtempSync(join(dir, "age-")), { keep: 100, maxAgeMs: 86_400_000 });
    aged.record({
      session_id: "s",
      prompt: "old",
      started_at: new Date(Date.now() - 3 * 86_400_000),
      ended_at: new Date(Date.now() - 2 * 86_400_000),
      outcome: "completed",
    });
    aged.record({
      session_id: "s",
      prompt: "new",
      started_at: new Date(Date.now() - 1000),
      ended_at: new Date(),
      outcome: "completed",
    });
    expect(aged.list().executions.map((e) => e.prompt)).toEqual(["new"]);
    aged.close();
  });

  it("metrics: turns (waits are not turns), average and p95 turn time, error rate, tokens, cost and whether it is complete", () => {
    const log = new ExecutionLog(mkdtempSync(join(dir, "metrics-")));
    // 20 completed turns of 1..20 s, one died, one failed start, one timed-out wait; one turn on an unpriced model.
    for (let i = 1; i <= 20; i++)
      log.record({
        session_id: "a",
        prompt: "x",
        started_at: at(0),
        ended_at: at(i),
        outcome: "completed",
        usage,
        cost_usd: 0.001,
        cost_complete: i !== 7,
      });
    log.record({ session_id: "a", prompt: "x", started_at: at(0), ended_at: at(30), outcome: "died", error: "gone" });
    log.record({ session_id: "a", prompt: "", started_at: at(0), ended_at: at(1), outcome: "start_failed", error: "no" });
    log.record({ session_id: "a", prompt: "x", started_at: at(0), ended_at: at(1), outcome: "timed_out" });
    log.record({
      session_id: "b",
      prompt: "y",
      started_at: at(0),
      ended_at: at(2),
      outcome: "completed",
      usage,
      cost_usd: 0.002,
      cost_complete: true,
    });
    const m = log.metrics();
    expect(m.get("a")).toMatchObject({
      turns: 22,
      error_rate: 2 / 22,
      cost_usd: 0.02,
      cost_complete: false,
      usage: { input_tokens: 200, output_tokens: 100 },
    });
    // Durations 1..20 s, 30 s and 1 s: 22 values, nearest-rank p95 is the 21st smallest.
    expect(m.get("a")!.p95_turn_ms).toBe(20_000);
    expect(m.get("a")!.avg_turn_ms).toBe(Math.round(((210 + 30 + 1) * 1000) / 22));
    expect(m.get("b")).toMatchObject({ turns: 1, error_rate: 0, cost_usd: 0.002, cost_complete: true, p95_turn_ms: 2000 });
    expect([...log.metrics(["b"]).keys()]).toEqual(["b"]);
    expect(log.list({ session_id: "b" })).toMatchObject({ total_count: 1, executions: [{ cost_complete: true }] });
    log.close();
  });
});

describe("failed turns are tool errors", () => {
  it.each([
    [{ completed: true, timed_out: false, final_state: "error", turn_outcome: "failed", error: "API Error: 500" }, "TURN_FAILED"],
    [{ completed: false, timed_out: false, final_state: "dead" }, "SESSION_DEAD"],
    [{ completed: true, timed_out: false, final_state: "idle", error_subtype: "error_max_budget_usd" }, "TURN_FAILED"],
  ])("%o → %s", (out, code) => expect(turnFailure(out)?.code).toBe(code));

  it.each([
    [{ completed: true, timed_out: false, final_state: "idle", turn_outcome: "completed" }],
    [
      {
        completed: true,
        timed_out: false,
        final_state: "idle",
        turn_outcome: "interrupted",
        error_subtype: "error_during_execution",
      },
    ],
    [{ completed: false, timed_out: true, final_state: "busy" }],
    [{ completed: false, timed_out: false, final_state: "waiting_for_permission", pending_permission: { tool_name: "Bash" } }],
    [{ final_state: "busy" }],
  ])("%o is not", (out) => expect(turnFailure(out)).toBeUndefined());
});

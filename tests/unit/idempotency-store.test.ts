/**
 * The idempotency records (store/idempotency.ts) on their own, with a clock the test moves: one claim wins among
 * many at once, a repeat reads the outcome, a record expires after 24 h (claimed again, swept), the folder's files
 * are 0600 and name neither caller nor key.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_MS, IdempotencyStore } from "../../src/store/idempotency.js";

const dirs: string[] = [];
function store(now: () => number = Date.now): IdempotencyStore {
  const d = mkdtempSync(join(tmpdir(), "cs-idem-"));
  dirs.push(d);
  return new IdempotencyStore(d, now);
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("idempotency records", () => {
  it("of 20 claims of one key at once, one runs; the others see its record, then its outcome", async () => {
    const s = store();
    const claims = await Promise.all(Array.from({ length: 20 }, () => s.claim("mcp:http:c/1", "send_message", "k1", "args")));
    const mine = claims.filter((c) => c.mine);
    expect(mine).toHaveLength(1);
    for (const c of claims)
      if (!c.mine) expect(c.record).toMatchObject({ tool: "send_message", args: "args", owner: { pid: process.pid } });
    const waiting = s.wait("mcp:http:c/1", "send_message", "k1");
    if (mine[0]?.mine) await mine[0].finish({ ok: true, value: { sent_at: "then" } });
    expect((await waiting)?.done).toEqual({ ok: true, value: { sent_at: "then" } });
    const again = await s.claim("mcp:http:c/1", "send_message", "k1", "args");
    expect(again.mine ? undefined : again.record.done).toEqual({ ok: true, value: { sent_at: "then" } });
    // Another caller, another tool, another key: each its own record.
    for (const [caller, tool, key] of [
      ["mcp:http:other/1", "send_message", "k1"],
      ["mcp:http:c/1", "run_task", "k1"],
      ["mcp:http:c/1", "send_message", "k2"],
    ] as const) {
      expect((await s.claim(caller, tool, key, "args")).mine).toBe(true);
    }
    // Files: 0600, named by a hash; neither caller nor key inside.
    const files = readdirSync(s.dir);
    expect(files).toHaveLength(4);
    for (const f of files) {
      expect(f).toMatch(/^[0-9a-f]{64}\.json$/);
      expect(statSync(join(s.dir, f)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(s.dir, f), "utf8")).not.toMatch(/mcp:http|"k1"|"k2"/);
    }
  });

  it("a refused call's release frees the key, and a waiter learns it (undefined) instead of waiting on", async () => {
    const s = store();
    const c = await s.claim("cli:me", "start_session", "k", "a");
    const waiting = s.wait("cli:me", "start_session", "k");
    if (c.mine) await c.release();
    expect(await waiting).toBeUndefined();
    expect((await s.claim("cli:me", "start_session", "k", "a")).mine).toBe(true);
  });

  it("a record expires after 24 h: the key is claimed anew, and a sweep removes old records", async () => {
    let now = 1_000_000;
    const s = store(() => now);
    const c = await s.claim("cli:me", "send_message", "old", "a");
    if (c.mine) await c.finish({ ok: true, value: 1 });
    await s.claim("cli:me", "send_message", "other", "a");
    now += IDEMPOTENCY_TTL_MS - 1;
    expect((await s.claim("cli:me", "send_message", "old", "a")).mine).toBe(false);
    expect(await s.get("cli:me", "send_message", "old")).toBeDefined();
    now += 1;
    expect(await s.get("cli:me", "send_message", "old")).toBeUndefined();
    const anew = await s.claim("cli:me", "send_message", "old", "b");
    expect(anew.mine).toBe(true);
    expect(readdirSync(s.dir).filter((f) => !f.startsWith("."))).toHaveLength(2);
    // "other" is 24 h old now; the fresh claim of "old" is not.
    expect(await s.sweep()).toBe(1);
    expect(readdirSync(s.dir)).toHaveLength(1);
  });
});

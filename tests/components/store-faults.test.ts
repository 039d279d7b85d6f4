/**
 * The state store under the faults of issue #16: ids that name Object.prototype members, a record that
 * fails the schema, dates that are not dates, a lock holder stopped past the stale time (SIGSTOP), and a
 * lock holder killed with -9. Real processes hold the lock (tests/helpers/lock-holder.mjs, built store).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Store } from "../../src/store/store.js";
import { WriteAbandoned, writeFileWhole } from "../../src/util/fs/atomic.js";
import { ROOT } from "../helpers/harness.js";
import { seedCounter, storeRecord as record, tempStateDir, warningLog } from "../helpers/store-setup.mjs";

const { warnings, log } = warningLog();
const dirs: string[] = [];
const children: ChildProcess[] = [];
function tmp(): string {
  const { root, dir } = tempStateDir("storef");
  dirs.push(root);
  return dir;
}
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  warnings.length = 0;
});

function writeState(dir: string, sessions: Record<string, unknown>): void {
  writeFileSync(
    join(dir, "state.json"),
    JSON.stringify({ version: "1.0.0", updated_at: new Date().toISOString(), sessions }, null, 2),
  );
}

/** Starts the lock holder; resolves once it printed "locked" (its update function runs, lock held). */
function holdLock(
  dir: string,
  staleMs: number,
  holdMs: number,
): Promise<{ child: ChildProcess; out: () => string; exited: Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    [join(ROOT, "tests", "helpers", "lock-holder.mjs"), dir, String(staleMs), String(holdMs)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let out = "";
  let err = "";
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      if (out.includes("locked")) resolve({ child, out: () => out + err, exited });
    });
    void exited.then((c) => reject(new Error(`lock holder exited (${c}) before locking: ${err}`)));
  });
}

describe("state store faults", () => {
  it.each(["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"])("the id %s is not a session", async (id) => {
    const s = new Store(tmp(), log);
    await s.update((st) => void (st.sessions.a = record("a")));
    expect(await s.get(id)).toBeUndefined();
    expect(await s.patch(id, (r) => void (r.turn_count = 1))).toBeUndefined();
    await s.update((st) => expect(st.sessions[id]).toBeUndefined());
  });

  it("a record that fails the schema is quarantined with one clear line; the good records stay and the server's read works", async () => {
    const dir = tmp();
    const s = new Store(dir, log);
    await s.read();
    writeState(dir, { good: record("good"), bad: { ...record("bad"), status: "bogus" } });
    const read = await new Store(dir, log).read();
    expect(Object.keys(read.sessions)).toEqual(["good"]);
    const q = readdirSync(dir).filter((f) => f.startsWith("state.json.quarantine-"));
    expect(q).toHaveLength(1);
    const quarantined = JSON.parse(readFileSync(join(dir, q[0]!), "utf8")) as {
      records: Record<string, { why: string; record: { status: string } }>;
    };
    expect(quarantined.records.bad?.record.status).toBe("bogus");
    expect(quarantined.records.bad?.why).toMatch(/status/);
    const line = warnings.find((w) => w.includes("quarantine"));
    expect(line).toMatch(/1 record\(s\) fail the schema.*"bad".*status.*kept 1 good record/);
    expect(warnings.join("\n")).not.toMatch(/unreadable/);
    // The file itself was settled: the bad record is gone from state.json, and it is not quarantined twice.
    expect(Object.keys(JSON.parse(readFileSync(join(dir, "state.json"), "utf8")).sessions)).toEqual(["good"]);
    await new Store(dir, log).read();
    expect(readdirSync(dir).filter((f) => f.startsWith("state.json.quarantine-"))).toHaveLength(1);
  });

  it("a created_at that is not a date is repaired from the record's other dates (never left to end the session)", async () => {
    const dir = tmp();
    await new Store(dir, log).read();
    const started = "2026-11-20T10:00:00.000Z";
    writeState(dir, {
      a: record("a", { created_at: "yesterday", started_at: started, last_active: "soon" }),
      b: record("b", { created_at: "" }),
    });
    const st = await new Store(dir, log).read();
    expect(st.sessions.a?.created_at).toBe(started);
    expect(st.sessions.a?.last_active).toBeUndefined();
    expect(Number.isFinite(Date.parse(st.sessions.b!.created_at))).toBe(true);
    expect(warnings.join("\n")).toMatch(/a: created_at "yesterday" is not a date/);
  });

  it("a holder stopped (SIGSTOP) past the stale time survives SIGCONT, and neither its update nor the other process's is lost", async () => {
    const dir = tmp();
    const s = new Store(dir, log, { staleMs: 2000 });
    await seedCounter(s);
    const h = await holdLock(dir, 2000, 1500);
    process.kill(h.child.pid!, "SIGSTOP");
    try {
      // The stopped holder's lock goes stale after 2 s: this process takes it over and writes.
      await s.update((st) => void (st.sessions.counter!.turn_count += 10));
      await new Promise((r) => setTimeout(r, 1000)); // time passing is the point: the holder stays stopped after the takeover
    } finally {
      process.kill(h.child.pid!, "SIGCONT");
    }
    expect(await h.exited).toBe(0);
    expect(h.out()).toMatch(/done/);
    expect((await s.get("counter"))?.turn_count).toBe(11);
  }, 30_000);

  it("a holder killed with -9 does not make the next one wait for the lock to age", async () => {
    const dir = tmp();
    const s = new Store(dir, log); // the default stale time, 10 s
    await seedCounter(s);
    const h = await holdLock(dir, 10_000, 60_000);
    process.kill(h.child.pid!, "SIGKILL");
    await h.exited;
    const t0 = performance.now();
    await s.update((st) => void (st.sessions.counter!.turn_count += 1));
    // Not a speed target: waiting for the dead holder's lock to age takes the whole stale time (10 s);
    // taking it over from a holder known to be dead takes a check or two (100 ms each).
    expect(performance.now() - t0).toBeLessThan(5000);
    expect((await s.get("counter"))?.turn_count).toBe(1);
  }, 30_000);

  it("a writer whose lock is taken over between its last check and its rename replaces nothing (the fence), and retries", async () => {
    const dir = tmp();
    const file = join(dir, "state.json");
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, "the other process's write\n");
    const lockDir = `${file}.lock`;
    mkdirSync(lockDir);
    // The takeover lands right after the check said "still mine": the lock directory is set aside, as a taker does.
    const stillMine = () => {
      renameSync(lockDir, `${lockDir}.gone-test`);
      return true;
    };
    await expect(writeFileWhole(file, "a stale write\n", 0o600, stillMine, lockDir)).rejects.toBeInstanceOf(WriteAbandoned);
    expect(readFileSync(file, "utf8")).toBe("the other process's write\n");
    expect(readdirSync(dir).filter((n) => n.startsWith(".state.json"))).toEqual([]);
    // Through the store: a taken-over lock makes the update re-read and write again, under a lock of its own.
    const s = new Store(join(dirs.at(-1)!, "s2"), log);
    await seedCounter(s);
    let tookOver = false;
    await s.update((st) => {
      if (!tookOver) {
        tookOver = true;
        renameSync(`${s.file}.lock`, `${s.file}.lock.gone-test`);
      }
      st.sessions.counter!.turn_count += 1;
    });
    expect((await s.get("counter"))?.turn_count).toBe(1);
    expect(warnings.some((w) => /taken over/.test(w))).toBe(true);
  });

  it("a lock directory its maker never recorded (killed between the two) is taken over once unrefreshed for 3 s, not after 10", async () => {
    const dir = tmp();
    const s = new Store(dir, log); // the default stale time, 10 s
    await seedCounter(s);
    mkdirSync(`${s.file}.lock`);
    const t0 = performance.now();
    await s.update((st) => void (st.sessions.counter!.turn_count += 1));
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThan(2500); // a fresh directory is left alone: its maker may be writing its record
    expect(waited).toBeLessThan(7000);
    expect((await s.get("counter"))?.turn_count).toBe(1);
  }, 30_000);
});

import { execFile } from "node:child_process";
import { readFileSync, rmSync, statSync, writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { Store } from "../../src/store/store.js";
import { ROOT } from "../helpers/harness.js";
import { seedCounter, storeRecord as record, tempStateDir, warningLog } from "../helpers/store-setup.mjs";

const pexec = promisify(execFile);
const { warnings, log } = warningLog();
const dirs: string[] = [];
function tmp(): string {
  const { root, dir } = tempStateDir("store");
  dirs.push(root);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  warnings.length = 0;
});

describe("state store", () => {
  it("creates a private directory and file in the spec's format", async () => {
    const dir = tmp();
    const s = new Store(dir, log);
    await s.update((st) => void (st.sessions.a = record("a")));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "state.json")).mode & 0o777).toBe(0o600);
    const raw = JSON.parse(readFileSync(join(dir, "state.json"), "utf8"));
    expect(raw).toMatchObject({ version: "1.0.0", sessions: { a: { session_id: "a" } } });
    expect(Date.parse(raw.updated_at)).not.toBeNaN();
  });

  it("updates given at once share a few writes; one that throws halfway changes nothing and the others land", async () => {
    const dir = tmp();
    const s = new Store(dir, log);
    await s.update((st) => void (st.sessions.seed = record("seed")));
    const file = join(dir, "state.json");
    // Each update notes which version of the file it was applied to: one write per version.
    const seen = new Set<number>();
    const ups = Array.from({ length: 20 }, (_, i) =>
      s.update((st) => {
        seen.add(statSync(file).ino);
        st.sessions[`s${i}`] = record(`s${i}`);
        if (i === 7) {
          st.sessions.seed!.status = "dead";
          throw new Error("refused halfway");
        }
        return i;
      }),
    );
    const out = await Promise.allSettled(ups);
    expect(out.filter((o) => o.status === "rejected").map((o) => String((o as PromiseRejectedResult).reason))).toEqual([
      "Error: refused halfway",
    ]);
    expect(out.filter((o) => o.status === "fulfilled").map((o) => (o as PromiseFulfilledResult<number>).value)).toEqual(
      [...Array(20).keys()].filter((i) => i !== 7),
    );
    const onDisk = JSON.parse(readFileSync(file, "utf8")).sessions;
    expect(Object.keys(onDisk).sort()).toEqual(
      ["seed", ...[...Array(20).keys()].filter((i) => i !== 7).map((i) => `s${i}`)].sort(),
    );
    expect(onDisk.seed.status).not.toBe("dead"); // the refused update's change is not in the file
    expect(seen.size).toBeLessThanOrEqual(2);
  });

  it("keeps a backup and recovers a corrupt file from it, loudly, keeping the broken one aside", async () => {
    const dir = tmp();
    const s = new Store(dir, log);
    await s.update((st) => void (st.sessions.a = record("a")));
    await s.update((st) => void (st.sessions.b = record("b")));
    expect(JSON.parse(readFileSync(join(dir, "state.json.bak"), "utf8")).sessions).toHaveProperty("a");
    writeFileSync(join(dir, "state.json"), '{"version": "1.0.0", "sessions": {"a": tru');
    const read = await s.read();
    expect(Object.keys(read.sessions)).toEqual(["a"]); // from the backup, not emptied
    expect(warnings.join("\n")).toMatch(/unreadable.*state\.json\.bak/);
    await s.update((st) => void (st.sessions.c = record("c")));
    expect(Object.keys((await s.read()).sessions).sort()).toEqual(["a", "c"]);
    expect(readdirSync(dir).some((f) => f.startsWith("state.json.corrupt-"))).toBe(true);
  });

  it("a record that fails validation is not accepted silently: it is quarantined, loudly", async () => {
    const dir = tmp();
    const s = new Store(dir, log);
    await s.read();
    writeFileSync(
      join(dir, "state.json"),
      JSON.stringify({ version: "1.0.0", updated_at: "x", sessions: { a: { session_id: 5 } } }),
    );
    expect(Object.keys((await s.read()).sessions)).toEqual([]);
    expect(warnings.join("\n")).toMatch(/fail the schema.*quarantine/);
    expect(readdirSync(dir).some((f) => f.startsWith("state.json.quarantine-"))).toBe(true);
  });

  it("four processes × 50 updates at once lose no update", async () => {
    const dir = tmp();
    const s = new Store(dir, log);
    await seedCounter(s);
    const worker = join(ROOT, "tests", "helpers", "store-worker.mjs");
    await Promise.all([1, 2, 3, 4].map((i) => pexec(process.execPath, [worker, dir, "50", `w${i}`])));
    expect((await s.get("counter"))?.turn_count).toBe(200);
  }, 60_000);
});

/**
 * store contention: P processes (tests/helpers/store-worker.mjs, on the built Store) each make U
 * read-modify-write updates of one shared counter record in one state.json, all at once. Each
 * update (lock → read → change → atomic write → unlock) is timed inside its worker. Lost updates
 * = P·U − the counter's final value.
 */
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { quietLog, seedCounter, tempStateDir } from "../../../tests/helpers/store-setup.mjs";
import { round, summary } from "../stats.mjs";
import { sutPath } from "../world.mjs";

function runWorker(worker, dir, n, who) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [worker, dir, String(n), who],
      { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`store worker ${who} failed: ${err.message}\n${stderr}`));
        try {
          resolve({ times: JSON.parse(stdout), stderr });
        } catch (e) {
          reject(new Error(`store worker ${who} printed no timings: ${String(e)}\n${stdout.slice(0, 200)}`));
        }
      },
    );
  });
}

export async function store(cfg) {
  const { Store } = await import(sutPath("dist", "store", "store.js"));
  const { root, dir } = tempStateDir("bench-store");
  try {
    const s = new Store(dir, quietLog);
    await seedCounter(s);
    const worker = sutPath("tests", "helpers", "store-worker.mjs");
    const P = cfg.storeProcs;
    const U = cfg.storeUpdates;
    const t0 = performance.now();
    const out = await Promise.all(Array.from({ length: P }, (_, i) => runWorker(worker, dir, U, `w${i + 1}`)));
    const wall = performance.now() - t0;
    const times = out.flatMap((o) => o.times);
    const warnings = out
      .map((o) => o.stderr)
      .join("")
      .trim();
    const final = (await s.get("counter"))?.turn_count ?? 0;
    const lost = P * U - final;
    const sm = summary(times);
    return [
      {
        key: "store",
        figure: `store contention: ${P} processes × ${U} updates at once`,
        runs: 1,
        ...sm,
        notes: `${lost} lost of ${P * U}; ${((P * U) / (wall / 1000)).toFixed(0)} updates/s overall; p50/p95/p99 = one update`,
        target: "0 lost updates, p99 ≤ 100 ms",
        result: lost === 0 && sm.p99 <= 100 ? "PASS" : "MISS",
        data: {
          processes: P,
          updates_each: U,
          final_count: final,
          lost,
          wall_ms: round(wall),
          update_latency_ms: sm,
          warnings: warnings.slice(0, 2000),
          samples_ms: times.map((x) => round(x)),
        },
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

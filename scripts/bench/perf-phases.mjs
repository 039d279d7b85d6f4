#!/usr/bin/env node
/**
 * The CPU each program took inside the windows a bench marked (parallel-cpu.mjs --phases=FILE), from a system-wide
 * perf recording made with the same clock:
 *
 *   perf record -a -F 997 -e cpu-clock -k CLOCK_MONOTONIC -o /tmp/pc.data -- node scripts/bench/parallel-cpu.mjs \
 *     --runs=6 --phases=/tmp/pc.phases
 *   perf script -i /tmp/pc.data -F comm,time > /tmp/pc.txt
 *   node scripts/bench/perf-phases.mjs /tmp/pc.txt /tmp/pc.phases [--hz=997]
 *
 * Each sample is one tick of one CPU (1/hz s); the idle task (`swapper`) is left out. Printed per window kind: the
 * CPU ms per round of each program (by its command name: the CLI, node for the server and the bench, tmux, sh, flock…).
 */
import { readFileSync } from "node:fs";

const [samplesFile, phasesFile, ...rest] = process.argv.slice(2);
if (!samplesFile || !phasesFile) throw new Error("usage: perf-phases.mjs <perf script -F comm,time output> <phases file>");
const hz = Number(rest.find((a) => a.startsWith("--hz="))?.slice(5) ?? 997);
const windows = readFileSync(phasesFile, "utf8")
  .trim()
  .split("\n")
  .map((l) => l.split(" "))
  .map(([kind, from, to]) => ({ kind, from: Number(from) / 1e9, to: Number(to) / 1e9 }));
const rounds = new Map();
for (const w of windows) rounds.set(w.kind, (rounds.get(w.kind) ?? 0) + 1);
/** kind → comm → samples */
const by = new Map();
for (const line of readFileSync(samplesFile, "utf8").split("\n")) {
  const m = /^\s*(.+?)\s+(\d+\.\d+):?\s*$/.exec(line);
  if (!m) continue;
  const [, comm, t] = m;
  if (comm === "swapper") continue;
  const at = Number(t);
  const w = windows.find((x) => at >= x.from && at <= x.to);
  if (!w) continue;
  const c = by.get(w.kind) ?? new Map();
  c.set(comm, (c.get(comm) ?? 0) + 1);
  by.set(w.kind, c);
}
const kinds = [...by.keys()];
const comms = [...new Set(kinds.flatMap((k) => [...by.get(k).keys()]))];
const per = (k, c) => ((by.get(k)?.get(c) ?? 0) * 1000) / hz / rounds.get(k);
comms.sort((a, b) => Math.max(...kinds.map((k) => per(k, b))) - Math.max(...kinds.map((k) => per(k, a))));
console.log(`| program (CPU ms per round) | ${kinds.map((k) => `${k} (${rounds.get(k)} rounds)`).join(" | ")} |`);
console.log(`| --- | ${kinds.map(() => "---").join(" | ")} |`);
for (const c of comms) console.log(`| ${c} | ${kinds.map((k) => Math.round(per(k, c))).join(" | ")} |`);
console.log(`| all | ${kinds.map((k) => Math.round(comms.reduce((a, c) => a + per(k, c), 0))).join(" | ")} |`);

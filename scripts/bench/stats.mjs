/**
 * Small numeric helpers. Percentiles are nearest-rank: p(q) = the ceil(q·n)-th smallest sample, so
 * every reported figure is a latency that was actually observed (p99 of 200 runs is the 198th).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export function percentile(samples, q) {
  if (!samples.length) return undefined;
  const s = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * s.length));
  return s[Math.min(rank, s.length) - 1];
}

/** {n, p50, p95, p99, min, max, mean} of a list of milliseconds, rounded to 0.01 ms. */
export function summary(samples) {
  const r = (x) => (x === undefined ? undefined : Math.round(x * 100) / 100);
  if (!samples.length) return { n: 0 };
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    n: samples.length,
    p50: r(percentile(samples, 0.5)),
    p95: r(percentile(samples, 0.95)),
    p99: r(percentile(samples, 0.99)),
    min: r(Math.min(...samples)),
    max: r(Math.max(...samples)),
    mean: r(mean),
  };
}

export function round(x, d = 2) {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

export function fmtMs(x) {
  if (x === undefined || x === null || Number.isNaN(x)) return "—";
  if (Math.abs(x) >= 1000) return `${(x / 1000).toFixed(2)} s`;
  if (Math.abs(x) >= 100) return `${x.toFixed(0)} ms`;
  if (Math.abs(x) >= 10) return `${x.toFixed(1)} ms`;
  return `${x.toFixed(2)} ms`;
}

/** A deterministic PRNG (mulberry32), so prompt sets and delays are the same on every run. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int(lo, hi) {
      return lo + Math.floor(next() * (hi - lo + 1));
    },
    pick(arr) {
      return arr[Math.floor(next() * arr.length)];
    },
  };
}

// ---------------------------------------------------------------- /proc

let clkTck;
export function clockTicks() {
  if (clkTck) return clkTck;
  try {
    clkTck = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    clkTck = 100;
  }
  return clkTck;
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // f[0] is field 3 (state); utime is field 14, stime field 15.
  const ticks = Number(f[11]) + Number(f[12]);
  return (ticks * 1000) / clockTicks();
}

/** Per pid: [ppid, CPU ms (user + system, own and reaped children's)], from /proc/<pid>/stat. */
export function procTable() {
  const t = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1].split(" ");
      t.set(Number(d), [Number(f[1]), (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10]);
    } catch {
      /* gone */
    }
  }
  return t;
}
export function treeCpuMs(root, t = procTable()) {
  let ms = 0;
  const walk = (pid) => {
    ms += t.get(pid)?.[1] ?? 0;
    for (const [k, [pp]] of t) if (pp === pid) walk(k);
  };
  walk(root);
  return ms;
}

/** VmRSS and VmHWM (peak) of a process in MiB, from /proc/<pid>/status. */
export function memMiB(pid) {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/** Samples a process's RSS every `everyMs` until stopped; returns {peakRss, hwm, samples}. */
export function rssSampler(pid, everyMs = 200) {
  let peak = 0;
  let n = 0;
  const tick = () => {
    try {
      const m = memMiB(pid);
      peak = Math.max(peak, m.rss);
      n += 1;
    } catch {
      /* process gone */
    }
  };
  tick();
  const t = setInterval(tick, everyMs);
  return {
    stop() {
      clearInterval(t);
      tick();
      let hwm;
      try {
        hwm = memMiB(pid).hwm;
      } catch {
        hwm = undefined;
      }
      return { peak_rss_mib: round(peak, 1), vm_hwm_mib: hwm === undefined ? undefined : round(hwm, 1), samples: n };
    },
  };
}

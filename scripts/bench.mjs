#!/usr/bin/env node
/**
 * claude-sessions bench (issue #6): `npm run bench` (builds first) or `node scripts/bench.mjs`.
 *
 *   --quick          fewer runs of each figure (proves the bench works; ~1 min)
 *   --real           also run the real Claude Code CLI against the mock Anthropic API (phases real, headless, first-answer, parallel's real rows)
 *   --only=a,b       run only these phases (detect, send, start, scale, list, store, permission, notify, real, parallel, history, http, http-churn, broadcast, headless, nodes, fleet, hibernate, first-answer, sandbox, webhooks, attempts, limits)
 *   CS_BENCH_SUT=DIR measure the build in another checkout (dist/ and tests/fixtures there), e.g. an older commit
 *   --out=DIR        where to write the JSON (default bench-results/)
 *
 * Prints one table and writes bench-results/bench-<date>.json and bench-results/latest.json.
 * Exit code 0 even when a target is missed (benchmarks do not gate); 1 only when the bench itself
 * broke (a phase threw). Method notes: scripts/bench/README.md.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, release, totalmem } from "node:os";
import { join } from "node:path";
import { detect } from "./bench/phases/detect.mjs";
import { send } from "./bench/phases/send.mjs";
import { start } from "./bench/phases/start.mjs";
import { scale } from "./bench/phases/scale.mjs";
import { list } from "./bench/phases/list.mjs";
import { store } from "./bench/phases/store.mjs";
import { real } from "./bench/phases/real.mjs";
import { parallel } from "./bench/phases/parallel.mjs";
import { permission } from "./bench/phases/permission.mjs";
import { notify } from "./bench/phases/notify.mjs";
import { history } from "./bench/phases/history.mjs";
import { http, httpChurn } from "./bench/phases/http.mjs";
import { broadcast } from "./bench/phases/broadcast.mjs";
import { headless } from "./bench/phases/headless.mjs";
import { nodes } from "./bench/phases/nodes.mjs";
import { fleet } from "./bench/phases/fleet.mjs";
import { hibernate } from "./bench/phases/hibernate.mjs";
import { limits } from "./bench/phases/limits.mjs";
import { firstAnswer } from "./bench/phases/first-answer.mjs";
import { sandbox } from "./bench/phases/sandbox.mjs";
import { webhooks } from "./bench/phases/webhooks.mjs";
import { attempts } from "./bench/phases/attempts.mjs";
import { fmtMs } from "./bench/stats.mjs";
import { ROOT, cleanupAll, snapshot } from "./bench/world.mjs";

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const unknown = argv.filter((a) => !/^--(quick|real|only=.+|out=.+)$/.test(a));
if (unknown.length || flag("help")) {
  process.stderr.write(
    `usage: node scripts/bench.mjs [--quick] [--real] [--only=detect,send,start,scale,list,store,permission,notify,real,parallel,history,http,http-churn,broadcast,headless,nodes,fleet,hibernate,first-answer,sandbox,webhooks,attempts,limits] [--out=DIR]\n`,
  );
  process.exit(unknown.length ? 2 : 0);
}

const quick = flag("quick");
const cfg = quick
  ? {
      mode: "quick",
      parallelSessions: [4],
      parallelSends: 5,
      detectTurns: 20,
      pollSessions: 2,
      sendPrompts: 30,
      starts: 5,
      scaleSessions: 10,
      scaleTurns: 3,
      idleSeconds: 5,
      listRecords: 1000,
      listCalls: 20,
      storeProcs: 4,
      storeUpdates: 50,
      realRuns: 3,
      permissionRuns: 5,
      notifyRuns: 20,
      notifySessions: 10,
      httpListCalls: 30,
      httpTurns: 15,
      httpClients: 20,
      httpClientTurns: 10,
      httpDomTurns: 15,
      httpChurn: 300,
      broadcastMembers: 10,
      broadcastRounds: 10,
      nodesSessions: 10,
      nodesRounds: 2,
      nodesListCalls: 30,
      nodesOutages: 2,
      fleetHosts: 3,
      fleetSessions: 20,
      fleetLocal: 3,
      fleetStartParallel: 3,
      fleetRestSeconds: 5,
      fleetListCalls: 20,
      fleetStopRounds: 10,
      fleetBroadcastRounds: 2,
      hibernateSessions: 20,
      hibernateLive: 4,
      limitSessions: 10,
      limitWakesPerMin: 120,
    }
  : {
      mode: "full",
      parallelSessions: [4, 10],
      parallelSends: 25,
      detectTurns: 200,
      pollSessions: 2,
      sendPrompts: 500,
      starts: 50,
      scaleSessions: 50,
      scaleTurns: 10,
      idleSeconds: 30,
      listRecords: 1000,
      listCalls: 100,
      storeProcs: 4,
      storeUpdates: 250,
      realRuns: 10,
      permissionRuns: 20,
      notifyRuns: 100,
      notifySessions: 50,
      httpListCalls: 200,
      httpTurns: 100,
      httpClients: 20,
      httpClientTurns: 10,
      httpDomTurns: 50,
      httpChurn: 1000,
      broadcastMembers: 10,
      broadcastRounds: 50,
      nodesSessions: 10,
      nodesRounds: 5,
      nodesListCalls: 100,
      nodesOutages: 5,
      fleetHosts: 10,
      fleetSessions: 50,
      fleetLocal: 5,
      fleetStartParallel: 4,
      fleetRestSeconds: 20,
      fleetListCalls: 100,
      fleetStopRounds: 30,
      fleetBroadcastRounds: 5,
      hibernateSessions: 200,
      hibernateLive: 20,
      limitSessions: 20,
      limitWakesPerMin: 120,
    };
cfg.real = flag("real");

const PHASES = [
  ["detect", detect],
  ["send", send],
  ["start", start],
  ["scale", scale],
  ["list", list],
  ["store", store],
  ["permission", permission],
  ["notify", notify],
  ["broadcast", broadcast],
  ["real", real],
  ["parallel", parallel],
  ["history", history],
  ["http", http],
  ["http-churn", httpChurn],
  ["headless", headless],
  ["nodes", nodes],
  ["fleet", fleet],
  ["hibernate", hibernate],
  ["limits", limits],
  ["first-answer", firstAnswer],
  ["sandbox", sandbox],
  ["webhooks", webhooks],
  ["attempts", attempts],
];
const only = opt("only")?.split(",").filter(Boolean);
if (only) {
  const bad = only.filter((n) => !PHASES.some(([k]) => k === n));
  if (bad.length) {
    process.stderr.write(`unknown phase(s): ${bad.join(", ")}\n`);
    process.exit(2);
  }
}

const log = (msg) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

function sh(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}

function machine() {
  const model =
    /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpus()[0]?.model ?? "unknown";
  return {
    cpu: model,
    cores: cpus().length,
    ram_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    free_gib_at_start: Math.round((freemem() / 2 ** 30) * 10) / 10,
    node: process.versions.node,
    tmux: sh("tmux", ["-V"]) ?? "not found",
    kernel: release(),
    load_at_start: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function git() {
  const commit = sh("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"]);
  const dirty = sh("git", ["-C", ROOT, "status", "--porcelain", "--", "src"]);
  return { commit, src_dirty: Boolean(dirty) };
}

// ---------------------------------------------------------------- table

function table(rows) {
  const head = ["figure", "runs", "p50", "p95", "p99", "notes", "target", "result"];
  const body = rows.map((r) => [
    r.figure,
    String(r.runs ?? ""),
    r.p50 === undefined ? (r.value ?? "—") : fmtMs(r.p50),
    r.p95 === undefined ? "—" : fmtMs(r.p95),
    r.p99 === undefined ? "—" : fmtMs(r.p99),
    r.notes ?? "",
    r.target ?? "",
    r.result,
  ]);
  const width = head.map((h, i) => Math.max([...h].length, ...body.map((b) => [...b[i]].length)));
  const line = (cells) => `| ${cells.map((c, i) => c + " ".repeat(width[i] - [...c].length)).join(" | ")} |`;
  return [line(head), `|${width.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

// ---------------------------------------------------------------- main

async function main() {
  if (!existsSync(join(ROOT, "dist", "bin.js")))
    throw new Error(`${join(ROOT, "dist", "bin.js")} is missing: run \`npm run build\` first (npm run bench does).`);
  const gitAtStart = git();
  snapshot();
  const started = new Date();
  const mach = machine();
  log(`${cfg.mode} run on ${mach.cpu} (${mach.cores} cores), load ${mach.load_at_start.join(" ")}`);
  const rows = [];
  let broke = false;
  for (const [name, fn] of PHASES) {
    if (only && !only.includes(name)) continue;
    const t0 = performance.now();
    log(`${name}: running`);
    try {
      const out = await fn(cfg, log);
      for (const r of out) rows.push({ ...r, phase: name });
    } catch (e) {
      broke = true;
      log(`${name}: BROKE: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      rows.push({
        key: name,
        phase: name,
        figure: `${name}: (the bench broke)`,
        notes: String(e instanceof Error ? e.message : e)
          .split("\n")[0]
          .slice(0, 120),
        result: "ERROR",
      });
    }
    log(`${name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const finished = new Date();
  mach.load_at_end = loadavg().map((x) => Math.round(x * 100) / 100);

  const header = [
    `claude-sessions bench, ${cfg.mode} run, ${started.toISOString()} (${((finished - started) / 1000).toFixed(0)} s)`,
    `machine: ${mach.cpu}, ${mach.cores} cores, ${mach.ram_gib} GiB RAM; node ${mach.node}; ${mach.tmux}; linux ${mach.kernel}`,
    `load average at start ${mach.load_at_start.join(" ")}, at end ${mach.load_at_end.join(" ")}; git ${gitAtStart.commit ?? "?"}${gitAtStart.src_dirty ? " (src/ had uncommitted changes)" : ""}; dist/ and fixtures copied at the start`,
    `percentiles are nearest-rank over the stated runs; fake claude (tests/fixtures/bin/claude) unless the row says otherwise`,
  ].join("\n");
  const text = `${header}\n\n${table(rows)}\n`;
  process.stdout.write(`\n${text}`);

  const outDir = opt("out") ?? join(ROOT, "bench-results");
  mkdirSync(outDir, { recursive: true });
  const stamp = started
    .toISOString()
    .replace(/[:]/g, "-")
    .replace(/\.\d+Z$/, "Z");
  const file = join(outDir, `bench-${stamp}${quick ? "-quick" : ""}.json`);
  const json = {
    schema: 1,
    mode: cfg.mode,
    started_at: started.toISOString(),
    finished_at: finished.toISOString(),
    duration_s: Math.round((finished - started) / 1000),
    machine: mach,
    git: gitAtStart,
    config: cfg,
    phases: PHASES.map(([k]) => k).filter((k) => !only || only.includes(k)),
    broke,
    rows: rows.map(({ data, ...r }) => ({ ...r, ...(data ? { data } : {}) })),
    table: text,
  };
  writeFileSync(file, JSON.stringify(json, null, 2) + "\n");
  writeFileSync(join(outDir, "latest.json"), JSON.stringify(json, null, 2) + "\n");
  process.stdout.write(`\nwrote ${file}\n  and ${join(outDir, "latest.json")}\n`);
  return broke ? 1 : 0;
}

main()
  .then((code) => {
    cleanupAll();
    process.exit(code);
  })
  .catch((e) => {
    process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    cleanupAll();
    process.exit(1);
  });

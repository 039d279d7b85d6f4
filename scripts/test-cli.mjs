#!/usr/bin/env node
/**
 * The drift check (issue 20 item 4): runs the real-CLI suites against any Claude Code version.
 *
 *   npm run test:cli -- --version <x.y.z|latest> [--files=<vitest file filters, comma-separated>]
 *
 * The version is installed into `${XDG_CACHE_HOME:-$HOME/.cache}/claude-sessions/cli/<version>` with
 * `npm install --prefix` (reused when present; the pinned devDependency for its own version: scripts/cli-cache.mjs),
 * then `vitest run` runs tests/e2e (tmux, pty and headless over MCP) and tests/integration/headless-*.test.ts (the
 * headless engine) with CLAUDE_PATH pointing at it — the headless engine hands the same path to the Agent SDK
 * (pathToClaudeCodeExecutable). Prints a table of passed/failed/skipped per file and backend, then each failure with
 * the first line of its reason, and how long the run took. Exit code: vitest's.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { cliFor, ROOT } from "./cli-cache.mjs";

const argv = process.argv.slice(2);
let version;
let files = ["tests/e2e", "tests/integration/headless-"];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--version") version = argv[++i];
  else if (a.startsWith("--version=")) version = a.slice(10);
  else if (a.startsWith("--files=")) files = a.slice(8).split(",").filter(Boolean);
  else {
    process.stderr.write(`unknown argument ${JSON.stringify(a)}\n`);
    version = undefined;
    break;
  }
}
if (!version) {
  process.stderr.write("usage: npm run test:cli -- --version <x.y.z|latest> [--files=tests/e2e,tests/integration/headless-]\n");
  process.exit(2);
}

const t0 = Date.now();
const cli = cliFor(version);
process.stderr.write(`claude ${cli.version} at ${cli.path}${cli.installed ? " (installed now)" : ""}\n`);
const out = mkdtempSync(join(tmpdir(), "cs-test-cli-"));
const report = join(out, "vitest.json");
const r = spawnSync(
  "npx",
  ["vitest", "run", "--project", "processes", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...files],
  {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, CLAUDE_PATH: cli.path },
  },
);
const minutes = ((Date.now() - t0) / 60_000).toFixed(1);

let json;
try {
  json = JSON.parse(readFileSync(report, "utf8"));
} catch (e) {
  process.stderr.write(`no vitest JSON report (${e.message}); vitest exit ${r.status}\n`);
  process.exit(r.status || 1);
} finally {
  rmSync(out, { recursive: true, force: true });
}

/** The backend a test ran on: describe.each names end in "(tmux)" / "(pty)"; the headless files and groups say so. */
function backendOf(file, titles) {
  const joined = titles.join(" ");
  const m = /\((tmux|pty|headless)\)/.exec(joined);
  if (m) return m[1];
  if (/headless/.test(file) || /headless/i.test(joined)) return "headless";
  return "tmux";
}

const rows = new Map();
const failures = [];
for (const f of json.testResults ?? []) {
  const file = relative(ROOT, f.name);
  for (const t of f.assertionResults ?? []) {
    const key = `${file}\t${backendOf(file, t.ancestorTitles ?? [])}`;
    const row = rows.get(key) ?? { passed: 0, failed: 0, skipped: 0 };
    if (t.status === "passed") row.passed += 1;
    else if (t.status === "failed") {
      row.failed += 1;
      const why = (t.failureMessages?.[0] ?? "").split("\n").find((l) => l.trim()) ?? "";
      failures.push(`${file} (${key.split("\t")[1]}): ${t.title} — ${why.replace(/\x1b\[[0-9;]*m/g, "").slice(0, 300)}`);
    } else row.skipped += 1;
    rows.set(key, row);
  }
  if (!(f.assertionResults ?? []).length && f.status === "failed")
    failures.push(`${file}: the file failed to run — ${(f.message ?? "").split("\n")[0]}`);
}

const lines = [
  `Claude Code ${cli.version} (${minutes} min)`,
  "",
  "| file | backend | passed | failed | skipped |",
  "| --- | --- | --- | --- | --- |",
];
const total = { passed: 0, failed: 0, skipped: 0 };
for (const [key, row] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
  const [file, backend] = key.split("\t");
  lines.push(`| ${file} | ${backend} | ${row.passed} | ${row.failed} | ${row.skipped} |`);
  for (const k of Object.keys(total)) total[k] += row[k];
}
lines.push(`| **all** | | ${total.passed} | ${total.failed} | ${total.skipped} |`);
if (failures.length) lines.push("", "Failures:", ...failures.map((f) => `- ${f}`));
process.stdout.write(lines.join("\n") + "\n");
process.exit(r.status ?? 1);

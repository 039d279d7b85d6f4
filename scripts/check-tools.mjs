#!/usr/bin/env node
// npm run check:tools: the official MCP Inspector's schema-portability check (`--cli … --method tools/list --strict`)
// over this server's tools/list, for every toolset choice given (default: all, then core). It fails on any finding,
// a warning included (a property that accepts any value, a `type` list, a remote $ref…), and when the server listed
// no tools (a check that saw nothing passes nothing). Runs dist/bin.js (npm run build first) with a private HOME and
// state dir, so it touches neither the user's ~/.claude nor a running server.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const pkgFile = require.resolve("@modelcontextprotocol/inspector/package.json");
const pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
const INSPECTOR = join(dirname(pkgFile), typeof pkg.bin === "string" ? pkg.bin : pkg.bin["mcp-inspector"]);
const sets = process.argv.slice(2).length ? process.argv.slice(2) : ["all", "core"];

let failed = false;
for (const set of sets) {
  const home = mkdtempSync(join(tmpdir(), "cs-check-tools-"));
  try {
    const r = spawnSync(
      process.execPath,
      [
        INSPECTOR,
        "--cli",
        process.execPath,
        join(ROOT, "dist/bin.js"),
        "-e",
        `CLAUDE_SESSIONS_DIR=${join(home, "state")}`,
        "-e",
        `CLAUDE_SESSIONS_TOOLSETS=${set}`,
        "--method",
        "tools/list",
        "--strict",
      ],
      {
        cwd: home,
        env: { ...process.env, HOME: home, CLAUDE_SESSIONS_DIR: join(home, "state") },
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    let tools = [];
    try {
      tools = JSON.parse(r.stdout).tools ?? [];
    } catch {
      // reported below
    }
    // The report's lines: "Warning: tool …" / "Error: tool …" with Path, Issue and Suggestion, then a summary.
    const findings = (r.stderr ?? "").split("\n").filter((l) => /^(Warning|Error): tool /.test(l));
    const report = (r.stderr ?? "")
      .split("\n")
      .filter((l) => !l.startsWith("[claude-sessions]"))
      .join("\n")
      .trim();
    if (r.status !== 0 || findings.length || !tools.length) {
      failed = true;
      console.error(
        `check:tools ${set}: exit ${r.status}${r.error ? ` (${r.error.message})` : ""}, ${tools.length} tools, ${findings.length} findings`,
      );
      if (report) console.error(report);
    } else {
      console.log(`check:tools ${set}: ${tools.length} tools, 0 schema-portability findings (inspector ${pkg.version} --strict)`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);

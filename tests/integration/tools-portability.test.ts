/**
 * Issue 35: the official MCP Inspector's schema-portability check (`--cli … --method tools/list --strict`, the
 * devDependency @modelcontextprotocol/inspector) finds nothing in the built server's listing — no property that
 * accepts any value ({}), no `type` list — for all toolsets and for core alone. scripts/check-tools.mjs
 * (`npm run check:tools`) runs the Inspector against dist/bin.js with a private HOME and state dir.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = resolve(import.meta.dirname, "../../scripts/check-tools.mjs");

describe("tools/list portability (the MCP Inspector --strict)", () => {
  it("gives 0 findings for all toolsets and for core", () => {
    const r = spawnSync(process.execPath, [SCRIPT, "all", "core"], { encoding: "utf8", timeout: 240_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/check:tools all: \d+ tools, 0 schema-portability findings/);
    expect(r.stdout).toMatch(/check:tools core: \d+ tools, 0 schema-portability findings/);
  }, 300_000);
});

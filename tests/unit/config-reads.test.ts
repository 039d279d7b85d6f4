/**
 * The operator's settings are read in one module (src/config.ts): a setting read somewhere else is one a reader of
 * config.ts and docs/configuration.md cannot see. Exceptions are named: bin.ts reads two before anything loads (it
 * re-executes Node with heap flags), and the variables that tie a session's own processes to the server
 * (CLAUDE_SESSIONS_ID, _MEMBER_*, _TEAM_LEAD) are the session's, not the operator's.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { EARLY_SETTINGS, loadConfig } from "../../src/config.js";

const SRC = join(import.meta.dirname, "../../src");
const SESSION_OWN = /^CLAUDE_SESSIONS_(ID|MEMBER_[A-Z_]+|TEAM_LEAD)$/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("operator settings", () => {
  it("are read from the environment only in src/config.ts (bin.ts: its early pair; sessions' own tags aside)", () => {
    const reads: string[] = [];
    for (const f of files(SRC)) {
      const rel = relative(SRC, f);
      if (rel === "config.ts") continue;
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/\benv(?:\.|\[\s*["'`])(CLAUDE_SESSIONS_[A-Z0-9_]+)/g)) {
        const name = m[1]!;
        if (SESSION_OWN.test(name)) continue;
        if (rel === "bin.ts" && (EARLY_SETTINGS as readonly string[]).includes(name)) continue;
        reads.push(`${rel}: ${name}`);
      }
    }
    expect(reads).toEqual([]);
  });

  it("the HTTP, web, nodes and price settings are Config fields, checked at start", () => {
    const cfg = loadConfig({
      CLAUDE_SESSIONS_DIR: "/tmp/x",
      CLAUDE_SESSIONS_HTTP_MAX_CLIENTS: "3",
      CLAUDE_SESSIONS_HTTP_IDLE_MS: "0",
      CLAUDE_SESSIONS_NODES: "/tmp/n.json",
      CLAUDE_SESSIONS_PRICES: "/tmp/p.json",
    });
    expect(cfg).toMatchObject({
      httpMaxClients: 3,
      httpIdleMs: 0,
      webRoots: [],
      nodesFile: "/tmp/n.json",
      pricesFile: "/tmp/p.json",
    });
    expect(() => loadConfig({ CLAUDE_SESSIONS_HTTP_MAX_CLIENTS: "0" })).toThrow(/CLAUDE_SESSIONS_HTTP_MAX_CLIENTS/);
    expect(() => loadConfig({ CLAUDE_SESSIONS_WEB_ROOTS: "relative/dir" })).toThrow(/CLAUDE_SESSIONS_WEB_ROOTS/);
  });
});

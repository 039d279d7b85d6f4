/**
 * A server that starts at once (issue 38): the built entry is one bundle plus lazy chunks (scripts/bundle.mjs), so
 * a client's spawn → initialize → tools/list makes node's module loader read a handful of files, not the ~450
 * modules of the package and its dependencies one by one (most of a start's CPU before). Counted by a load hook in
 * the real server process, which the machine's load does not change.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, FIXTURES } from "../helpers/harness.js";
import { waitFor } from "../helpers/wait.js";

const dir = mkdtempSync(join(tmpdir(), "cs-start-"));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

describe("server start", () => {
  it("serves initialize and tools/list from the bundle: a few files, nothing from node_modules", async () => {
    const out = join(dir, "modules.txt");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", join(FIXTURES, "count-modules.mjs"), CLI],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: join(dir, "home"),
        CLAUDE_SESSIONS_DIR: join(dir, "state"),
        CLAUDE_SESSIONS_TMUX_SOCKET: `cs-test-start-${process.pid}`,
        CS_COUNT_MODULES_OUT: out,
      },
      stderr: "ignore",
    });
    const client = new Client({ name: "start-test", version: "1.0.0" });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("start_session");
    await client.close();
    const files = await waitFor(
      () => {
        try {
          return readFileSync(out, "utf8").split("\n").filter(Boolean);
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 30_000 },
    );
    const ours = files.filter((u) => !u.endsWith("/count-modules.mjs"));
    // Before the bundle: 450-odd files (195 of this package, 116 of zod, 63 of Ajv, ...).
    expect(ours.filter((u) => u.includes("/node_modules/"))).toEqual([]);
    expect(ours.length, ours.join("\n")).toBeLessThanOrEqual(40);
  }, 60_000);
});

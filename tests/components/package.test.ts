/**
 * The package as a newcomer gets it: `npm pack`, installed into an empty directory, runs — its bin prints the
 * version, and serves MCP on stdio (a real client lists the tools).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT } from "../helpers/harness.js";

const dir = mkdtempSync(join(tmpdir(), "cs-pack-"));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

describe("npm pack", () => {
  it("packs dist and the Node 24 set-up, installs into an empty project, and its bin runs and serves MCP", async () => {
    const npm = (args: string[], cwd: string) =>
      execFileSync("npm", args, {
        cwd,
        encoding: "utf8",
        env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false" },
        stdio: ["ignore", "pipe", "pipe"],
      });
    // --ignore-scripts: npm pack would run `prepare` (tsc), rewriting dist/ under the suites running beside this one.
    npm(["pack", "--ignore-scripts", "--pack-destination", dir, "--silent"], ROOT);
    const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
    expect(tarball).toBeDefined();
    const listed = execFileSync("tar", ["-tzf", join(dir, tarball!)], { encoding: "utf8" }).split("\n");
    expect(listed).toContain("package/dist/bin.js");
    expect(listed).toContain("package/scripts/node24.cjs");
    expect(listed.some((f) => f.startsWith("package/src/") || f.startsWith("package/tests/"))).toBe(false);

    const app = join(dir, "app");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "try-it", version: "1.0.0", private: true }));
    // Optional dependencies (node-pty's native build) are left out to keep this quick: the tmux backend suffices.
    npm(["install", "--prefer-offline", "--omit=optional", join(dir, tarball!)], app);
    const bin = join(app, "node_modules", ".bin", "claude-sessions");
    const version = JSON.parse(execFileSync("cat", [join(ROOT, "package.json")], { encoding: "utf8" })).version as string;
    expect(execFileSync(bin, ["--version"], { encoding: "utf8" }).trim()).toBe(version);

    const home = join(dir, "home");
    const transport = new StdioClientTransport({
      command: bin,
      args: [],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        CLAUDE_SESSIONS_DIR: join(dir, "state"),
        CLAUDE_SESSIONS_TMUX_SOCKET: `cs-test-pack-${process.pid}`,
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "pack-test", version: "1.0.0" });
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain("start_session");
    await client.close();
  }, 240_000);
});

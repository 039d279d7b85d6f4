/**
 * A server that starts at once (issue 38, item 3): what a first tools/list does not need is made or loaded later,
 * and still works when first needed.
 * - tools/list of the default toolsets comes from the listing made at build time (dist/server/tools-listing.json)
 *   only while the compiled modules it was made from are unchanged; it is the live listing, byte for byte.
 * - the compiled modules are kept between starts in <state>/compile-cache only when the state directory is private.
 * - the SDK's MCP client is loaded with a node's first link (nodes.test.ts drives the links themselves).
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listTools } from "../../src/server/server.js";
import { connect, makeWorld, ROOT, type World } from "../helpers/harness.js";

const LISTING = join(ROOT, "dist", "server", "tools-listing.json");
let worlds: World[] = [];
afterEach(() => {
  for (const w of worlds) w.cleanup();
  worlds = [];
});
function world(): World {
  const w = makeWorld();
  worlds.push(w);
  return w;
}

/** Every file under a directory, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

describe("a server that starts at once", () => {
  it("the build writes the default tools/list, equal to the live one, and a server lists it", async () => {
    expect(existsSync(LISTING)).toBe(true);
    const built = JSON.parse(readFileSync(LISTING, "utf8")) as { listings: { all: unknown[] } };
    const live = JSON.parse(JSON.stringify(listTools()));
    expect(built.listings.all).toEqual(live);
    const mcp = await connect(world());
    try {
      const { tools } = await mcp.client.listTools();
      expect(JSON.parse(JSON.stringify(tools))).toEqual(live);
    } finally {
      await mcp.close();
    }
  });

  it("a listing made from other modules is not used: the server lists live", async () => {
    const w = world();
    // A copy of the build whose listing file says a tool is named otherwise and carries another build's fingerprint.
    const copy = join(w.root, "pkg");
    mkdirSync(copy);
    cpSync(join(ROOT, "dist"), join(copy, "dist"), { recursive: true });
    cpSync(join(ROOT, "package.json"), join(copy, "package.json"));
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    const file = join(copy, "dist", "server", "tools-listing.json");
    const data = JSON.parse(readFileSync(file, "utf8")) as { fingerprint: string; listings: { all: Array<{ name: string }> } };
    data.listings.all[0]!.name = "stale_tool";
    writeFileSync(file, JSON.stringify({ ...data, fingerprint: "another build" }));
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const client = new Client({ name: "cs-test", version: "1" });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [join(copy, "dist", "bin.js")], env: w.env, stderr: "pipe" }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain("stale_tool");
      expect(names[0]).toBe("start_session");
      // The same copy with its fingerprint intact lists what the file says: the file is what was used.
      writeFileSync(file, JSON.stringify({ ...data, fingerprint: JSON.parse(readFileSync(LISTING, "utf8")).fingerprint }));
      const again = new Client({ name: "cs-test", version: "1" });
      await again.connect(
        new StdioClientTransport({ command: process.execPath, args: [join(copy, "dist", "bin.js")], env: w.env, stderr: "pipe" }),
      );
      try {
        expect((await again.listTools()).tools[0]!.name).toBe("stale_tool");
      } finally {
        await again.close();
      }
    } finally {
      await client.close();
    }
  });

  it("keeps compiled modules in a private state directory, and none in a shared one", async () => {
    const w = world();
    mkdirSync(w.stateDir, { mode: 0o700 });
    const first = await connect(w);
    await first.client.listTools();
    await first.close();
    const cache = join(w.stateDir, "compile-cache");
    expect(existsSync(cache)).toBe(true);
    // The bundled entry and its chunks (a dozen files, not the ~450 modules of the unbundled tsc output).
    expect(filesUnder(cache).length).toBeGreaterThan(0);
    // A second start reads them and works as the first did.
    const second = await connect(w);
    try {
      expect((await second.callOk("list_sessions", {})).sessions).toEqual([]);
    } finally {
      await second.close();
    }

    const shared = world();
    mkdirSync(shared.stateDir, { mode: 0o755 });
    chmodSync(shared.stateDir, 0o755);
    const mcp = await connect(shared);
    await mcp.client.listTools().catch(() => undefined);
    await mcp.close();
    expect(existsSync(join(shared.stateDir, "compile-cache"))).toBe(false);
    rmSync(shared.stateDir, { recursive: true, force: true });
  });
});

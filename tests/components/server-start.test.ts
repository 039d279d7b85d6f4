/**
 * A server that starts at once (issue 38): the built entry is one bundle plus lazy chunks (scripts/bundle.mjs), so
 * a client's spawn → initialize → tools/list makes node's module loader read a handful of files, not the ~450
 * modules of the package and its dependencies one by one (most of a start's CPU before). Counted by a load hook in
 * the real server process, which the machine's load does not change.
 * And a stdio server answers initialize and tools/list before its own start-up (the state directory, tmux's probe,
 * adopting sessions): that waits for nothing a client's connect waits for, and calls made meanwhile are answered once
 * it is done (cli/serve-early.ts).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, connect, FIXTURES, hasTmux, makeWorld } from "../helpers/harness.js";
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

  it.runIf(hasTmux())(
    "answers initialize and tools/list while its start-up waits for tmux; a call made meanwhile is answered after",
    async () => {
      const w = makeWorld();
      try {
        // tmux, as the server runs it, waits until the test opens the gate: the server's tmux probe hangs meanwhile.
        const gate = join(w.root, "gate");
        const tmux = join(w.root, "slow-tmux");
        const real = execFileSync("sh", ["-c", "command -v tmux"], { encoding: "utf8" }).trim();
        writeFileSync(tmux, `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.05; done\nexec '${real}' "$@"\n`);
        chmodSync(tmux, 0o755);
        const m = await connect(w, { CLAUDE_SESSIONS_TMUX: tmux }, { whole: false });
        try {
          const { tools } = await m.client.listTools();
          expect(tools.map((t) => t.name)).toContain("start_session");
          // Held until the server is made (it waits for tmux): sent now, answered once the gate opens.
          const held = m.call("list_sessions", {});
          writeFileSync(gate, "");
          expect((await held).ok).toBe(true);
          // tmux's probe went through (not timed out while the client connected): tmux sessions start.
          const s = await m.callOk("start_session", { cwd: w.dir("a"), backend: "tmux" });
          expect(s.status).toBe("ready");
          await m.callOk("kill_session", { session_id: s.session_id, force: true });
        } finally {
          await m.close();
        }
      } finally {
        w.cleanup();
      }
    },
    90_000,
  );
});

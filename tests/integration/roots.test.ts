/**
 * Issue #32 item 6: CLAUDE_SESSIONS_ROOTS confines the cwd (and add_dirs) of sessions started by any caller — MCP
 * over stdio, the CLI, run_task, resume and fork, adoption — and a client that declares MCP roots is confined to the
 * intersection with them (real tmux on a private socket, the fake claude, a real MCP client with a roots handler).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const TMUX = tmuxOrSkip();

function sessionIds(w: World): string[] {
  const p = join(w.stateDir, "state.json");
  if (!existsSync(p)) return [];
  return Object.keys((JSON.parse(readFileSync(p, "utf8")) as { sessions: Record<string, unknown> }).sessions);
}

describe.runIf(TMUX)("CLAUDE_SESSIONS_ROOTS and client roots (tmux, fake claude)", () => {
  let w: World;
  let m: Mcp;
  let allowed: string;
  let outside: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    allowed = w.dir("allowed");
    outside = w.dir("outside");
    mkdirSync(join(allowed, "a"));
    mkdirSync(join(allowed, "b"));
    // A link inside the root that leads out of it.
    symlinkSync(outside, join(allowed, "escape"));
    w.env.CLAUDE_SESSIONS_ROOTS = `${allowed},${w.dir("second")}`;
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("an MCP caller starts sessions inside the roots only: outside, /, a link out and add_dirs out are PERMISSION_DENIED, nothing recorded", async () => {
    const ok = await m.callOk("start_session", { cwd: join(allowed, "a") });
    expect(ok.cwd).toBe(join(allowed, "a"));
    const before = sessionIds(w);
    for (const args of [
      { cwd: outside },
      { cwd: "/" },
      { cwd: join(allowed, "escape") },
      { cwd: join(allowed, "a"), add_dirs: [outside] },
    ]) {
      const r = await m.call("start_session", args);
      expect(r.error?.code, JSON.stringify(args)).toBe("PERMISSION_DENIED");
      expect(r.error?.suggestion).toContain("CLAUDE_SESSIONS_ROOTS");
    }
    const task = await m.call("run_task", { cwd: outside, prompt: "hello", backend: "tmux" });
    expect(task.error?.code).toBe("PERMISSION_DENIED");
    const adopt = await m.call("resume_session", { claude_session_id: "0b6a4e43-7d43-4a53-9c1f-1d2a3b4c5d6e", cwd: outside });
    expect(adopt.error?.code).toBe("PERMISSION_DENIED");
    expect(sessionIds(w)).toEqual(before);
    // A resume or fork that would move the session out of the roots.
    await m.callOk("kill_session", { session_id: ok.session_id });
    const moved = await m.call("resume_session", { session_id: ok.session_id, cwd: outside });
    expect(moved.error?.code).toBe("PERMISSION_DENIED");
    const forked = await m.call("resume_session", { session_id: ok.session_id, fork: true, cwd: outside });
    expect(forked.error?.code).toBe("PERMISSION_DENIED");
    expect(sessionIds(w)).toEqual(before);
  });

  it("the CLI's start obeys the same roots", () => {
    const r = spawnSync(process.execPath, [CLI, "start", outside], {
      env: w.env,
      encoding: "utf8",
      timeout: 30_000,
      cwd: w.root,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("PERMISSION_DENIED");
  });

  it("a client that declares roots is confined to the intersection, and its roots/list_changed is honoured", async () => {
    let declared = [join(allowed, "a"), outside];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI],
      env: w.env,
      stderr: "pipe",
      cwd: w.root,
    });
    const client = new Client({ name: "roots-client", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
    let asked = 0;
    client.setRequestHandler(ListRootsRequestSchema, () => {
      asked++;
      return { roots: declared.map((d) => ({ uri: pathToFileURL(d).href, name: d })) };
    });
    await client.connect(transport);
    try {
      const call = async (args: Record<string, unknown>) => {
        const res = await client.callTool({ name: "start_session", arguments: args });
        const text = (res.content as Array<{ text: string }>)[0]!.text;
        return res.isError
          ? { error: (JSON.parse(text) as { error: { code: string; message: string } }).error }
          : { data: res.structuredContent as { session_id: string } };
      };
      expect((await call({ cwd: join(allowed, "a") })).data?.session_id).toBeTruthy();
      // Inside the operator's roots but not the client's.
      const b = await call({ cwd: join(allowed, "b") });
      expect(b.error?.code).toBe("PERMISSION_DENIED");
      expect(b.error?.message).toContain("roots your MCP client declared");
      // Inside the client's roots but not the operator's.
      expect((await call({ cwd: outside })).error?.message).toContain("outside the directories sessions may work in");
      expect(asked).toBe(1);
      declared = [join(allowed, "b")];
      await client.sendRootsListChanged();
      await expect.poll(async () => (await call({ cwd: join(allowed, "b") })).data?.session_id, { timeout: 10_000 }).toBeTruthy();
      expect((await call({ cwd: join(allowed, "a") })).error?.code).toBe("PERMISSION_DENIED");
    } finally {
      await client.close();
    }
  });

  it("a root that is not an absolute existing directory stops the server at start", () => {
    for (const bad of ["relative/dir", join(w.root, "missing")]) {
      const r = spawnSync(process.execPath, [CLI], {
        env: { ...w.env, CLAUDE_SESSIONS_ROOTS: bad },
        encoding: "utf8",
        timeout: 30_000,
        input: "",
      });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain("CLAUDE_SESSIONS_ROOTS");
    }
  });
});

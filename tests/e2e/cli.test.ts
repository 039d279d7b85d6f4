/**
 * The command line with the real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts): start with a
 * first prompt, send, run and kill, each one process of `claude-sessions` with no MCP client in between.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: the CLI starts, sends to and kills a session", () => {
  let e: E2e;
  // Not spawnSync: the mock API answers from this process's event loop.
  const cli = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((ok) => {
      const p = spawn(process.execPath, [CLI, ...args], {
        env: e.world.env,
        cwd: e.world.root,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      p.on("close", (status) =>
        ok({
          status,
          stdout,
          stderr: stderr
            .split("\n")
            .filter((l) => !l.startsWith("[claude-sessions]"))
            .join("\n"),
        }),
      );
    });
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["cli", "run"] });
  });
  afterAll(async () => {
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("start --prompt --wait, send, ls and kill", async () => {
    const cwd = e.dir("cli");
    const start = await cli("start", cwd, "--prompt", "hello from the command line", "--wait", "--permission-mode", "default");
    expect(start.status, start.stderr).toBe(0);
    const [first, reply] = start.stdout.trim().split("\n");
    const id = first!.split("\t")[0]!;
    expect(first!.split("\t").slice(2)).toEqual(["tmux", cwd]);
    expect(reply).toBe("MOCK REPLY: hello from the command line");
    const send = await cli("send", id, "and", "again");
    expect(send.status, send.stderr).toBe(0);
    expect(send.stdout.trim()).toBe("MOCK REPLY: and again");
    // The conversation carried over: the API saw the first turn with the second.
    expect(e.userTexts(e.requestsWith("and again")[0]!)).toEqual(
      expect.arrayContaining(["hello from the command line", "and again"]),
    );
    const ls = await cli("ls");
    expect(ls.stdout).toMatch(new RegExp(`^local\\t${id}\\t(ready|idle)\\ttmux\\t\\$\\d+\\.\\d+\\t`, "m"));
    const kill = await cli("kill", id);
    expect(kill.status, kill.stderr).toBe(0);
    expect(JSON.parse(kill.stdout)).toMatchObject({ session_id: id, status: "killed" });
    expect(e.events(id).filter((x) => x.hook_event_name === "SessionEnd")).toHaveLength(1);
  });

  it("run prints the one answer and exits 0", async () => {
    const r = await cli("run", e.dir("run"), "--backend", "tmux", "--permission-mode", "default", "one", "answer", "please");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe("MOCK REPLY: one answer please\n");
  });
});

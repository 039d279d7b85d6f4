/**
 * The human commands share the server's core: they see and drive the same sessions.
 */
import { spawnSync } from "node:child_process";
import { userInfo } from "node:os";
import { readAudit } from "../../src/store/audit.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const run = tmuxOrSkip();

describe.runIf(run)("claude-sessions CLI (tmux)", () => {
  let w: World;
  let m: Mcp;
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 30_000, cwd: w.root });
  beforeAll(async () => {
    w = makeWorld();
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("--help and --version", () => {
    const h = cli("--help");
    expect(h.status).toBe(0);
    expect(h.stdout).toContain("claude-sessions attach <id>");
    expect(cli("--version").stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const bad = cli("frobnicate");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown command");
  });

  it("doctor reports what it found", () => {
    const d = cli("doctor");
    expect(d.stdout).toMatch(/ok {3}tmux: tmux \d/);
    expect(d.stdout).toContain(`ok   claude: ${w.env.CLAUDE_PATH}`);
    expect(d.status).toBe(0);
  });

  it("ls, send, tail and kill act on sessions the MCP server started", async () => {
    const s = await m.call("start_session", { cwd: w.dir("cli") });
    const id = s.data.session_id as string;
    const ls = cli("ls");
    expect(ls.status).toBe(0);
    expect(ls.stdout).toContain(id);
    expect(ls.stdout).toContain("ready");
    const send = cli("send", id, "hello", "from", "the", "cli");
    expect(send.status, send.stderr).toBe(0);
    expect(send.stdout.trim()).toBe("FAKE REPLY: hello from the cli");
    const tail = cli("tail", id);
    expect(tail.stdout).toContain("❯ hello from the cli");
    const kill = cli("kill", id);
    expect(JSON.parse(kill.stdout)).toMatchObject({ session_id: id, status: "killed" });
    const gone = cli("send", id, "again");
    expect(gone.status).toBe(1);
    expect(gone.stderr).toContain("SESSION_DEAD");
    // Each CLI call that changes something is in the audit log with the unix user as its actor.
    const audit = (await readAudit(w.stateDir)).filter((l) => l.session_id === id && l.actor === `cli:${userInfo().username}`);
    expect(audit.map((l) => [l.tool, l.outcome, l.error_code])).toEqual([
      ["send_message", "ok", undefined],
      ["kill_session", "ok", undefined],
      ["send_message", "error", "SESSION_DEAD"],
    ]);
    expect(JSON.stringify(audit)).not.toContain("hello from the cli");
  });
});

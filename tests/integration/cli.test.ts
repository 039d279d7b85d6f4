/**
 * The human commands share the server's core: they see and drive the same sessions.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { userInfo } from "node:os";
import { readAudit } from "../../src/store/audit.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, hasPty, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const run = tmuxOrSkip();
const pty = await hasPty();

describe.runIf(run)("claude-sessions CLI (tmux)", () => {
  let w: World;
  let m: Mcp;
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 30_000, cwd: w.root });
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

  it("start, send and kill from the command line alone, each an audited tool call", async () => {
    const cwd = w.dir("cli-start");
    const start = cli("start", cwd, "--prompt", "first words", "--wait");
    expect(start.status, start.stderr).toBe(0);
    const [first, reply] = start.stdout.trim().split("\n");
    const [id, status, backend, where] = first!.split("\t");
    expect([backend, where]).toEqual(["tmux", cwd]);
    expect(status).toMatch(/^(ready|busy|idle)$/); // start_session's answer: the prompt may be running, or done, already
    expect(reply).toBe("FAKE REPLY: first words");
    // Piped: no progress line, no terminal codes.
    expect(start.stderr).not.toContain("\x1b[");
    const send = cli("send", id!, "and", "more");
    expect(send.status, send.stderr).toBe(0);
    expect(send.stdout.trim()).toBe("FAKE REPLY: and more");
    // The session outlives the commands: an MCP client sees it with both turns.
    const listed = await m.call("list_sessions", { status_filter: "active" });
    expect(
      (listed.data.sessions as { session_id: string; turn_count: number }[]).find((s) => s.session_id === id)?.turn_count,
    ).toBe(2);
    const ls = cli("ls");
    expect(ls.stdout).toMatch(new RegExp(`^local\t${id}\t(ready|idle)\ttmux\t\\$\\d+\\.\\d+\t${cwd}\t`, "m"));
    const kill = cli("kill", id!);
    expect(kill.status, kill.stderr).toBe(0);
    expect(JSON.parse(kill.stdout)).toMatchObject({ session_id: id, status: "killed" });
    const audit = (await readAudit(w.stateDir)).filter((l) => l.session_id === id && l.actor === `cli:${userInfo().username}`);
    expect(audit.map((l) => [l.tool, l.outcome])).toEqual([
      ["start_session", "ok"],
      ["wait_for_completion", "ok"],
      ["send_message", "ok"],
      ["kill_session", "ok"],
    ]);
  });

  it("start refuses what start_session refuses, with the code, and starts nothing", async () => {
    const missing = cli("start", w.dir("cli-bad") + "/nope");
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/claude-sessions: [A-Z_]+: .*nope/);
    const mode = cli("start", w.dir("cli-bad"), "--permission-mode", "yolo");
    expect(mode.status).toBe(1);
    expect(mode.stderr).toContain("INVALID_ARGUMENT");
    expect(mode.stderr).toContain("permission_mode");
    const lead = cli("start", w.dir("cli-bad"), "--lead");
    expect(lead.status).toBe(1);
    expect(lead.stderr).toContain("team_lead needs a team_name");
    const led = cli("start", w.dir("cli-lead"), "--team", "cli-team", "--lead", "--json");
    expect(led.status, led.stderr).toBe(0);
    const ledId = (JSON.parse(led.stdout) as { session_id: string }).session_id;
    const rec = (
      JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
        sessions: Record<string, { options: { team_lead?: boolean } }>;
      }
    ).sessions[ledId]!;
    expect(rec.options.team_lead).toBe(true);
    await m.call("kill_session", { session_id: ledId });
    const unknown = cli("start", w.dir("cli-bad"), "--frobnicate");
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("INVALID_ARGUMENT");
    const all = await m.call("list_sessions", { status_filter: "all" });
    expect((all.data.sessions as { cwd: string }[]).filter((s) => s.cwd.includes("cli-bad"))).toEqual([]);
  });

  it("run prints the answer and exits 0; a failed turn exits non-zero naming it", async () => {
    const cwd = w.dir("cli-run");
    const ok = cli("run", cwd, "--backend", "tmux", "what", "is", "2+2");
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe("FAKE REPLY: what is 2+2\n");
    const failed = cli("run", cwd, "--backend", "tmux", "FAKE_FAIL:overloaded");
    expect(failed.status).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(/claude-sessions: TURN_FAILED: .*API Error: overloaded/);
    const refused = cli("run", w.dir("cli-run") + "/missing", "--backend", "tmux", "hi");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/claude-sessions: [A-Z_]+: /);
    // Without --keep the sessions end when the answer is in (their records stay, resumable).
    const all = (await m.call("list_sessions", { status_filter: "all" })).data.sessions as { cwd: string; status: string }[];
    const runs = all.filter((s) => s.cwd === cwd);
    expect(runs).toHaveLength(2);
    for (const s of runs) expect(["killed", "dead", "exited", "stopped"]).toContain(s.status);
  });

  it("resume brings an ended session back and --wait prints the reply", async () => {
    const cwd = w.dir("cli-resume");
    const start = cli("start", cwd, "--prompt", "remember me", "--wait");
    expect(start.status, start.stderr).toBe(0);
    const id = start.stdout.split("\t")[0]!;
    expect(cli("kill", id).status).toBe(0);
    const resumed = cli("resume", id, "--message", "welcome back", "--wait");
    expect(resumed.status, resumed.stderr).toBe(0);
    const [first, reply] = resumed.stdout.trim().split("\n");
    expect(first!.split("\t")[0]).toBe(id);
    expect(reply).toBe("FAKE REPLY: welcome back");
    // reset: a fresh conversation in the same session (reset_session), the old one kept.
    const before = (await m.call("list_sessions", { status_filter: "all" })).data.sessions as {
      session_id: string;
      claude_session_id: string;
    }[];
    const old = before.find((s) => s.session_id === id)!.claude_session_id;
    const reset = cli("reset", id);
    expect(reset.status, reset.stderr).toBe(0);
    const [rid, , fresh, was] = reset.stdout.trim().split("\t");
    expect(rid).toBe(id);
    expect(fresh).not.toBe(old);
    expect(was).toBe(`(was ${old})`);
    const after = cli("send", id, "a new start");
    expect(after.stdout.trim()).toBe("FAKE REPLY: a new start");
    expect(cli("reset", "nosuchsession").stderr).toContain("SESSION_NOT_FOUND");
    expect(cli("resume", "nosuchsession").stderr).toContain("SESSION_NOT_FOUND");
    expect(cli("kill", id).status).toBe(0);
  });

  it.runIf(pty)("on a terminal a progress line shows the status, the time and the tokens while the turn runs", async () => {
    const { spawn } = await import("node-pty");
    const cwd = w.dir("cli-progress");
    const term = spawn(process.execPath, [CLI, "run", cwd, "--backend", "tmux", "FAKE_SLOW:2500 slowly"], {
      cwd: w.root,
      env: w.env,
      cols: 160,
      rows: 20,
    });
    let screen = "";
    term.onData((d) => (screen += d));
    const code = await new Promise<number>((ok) => term.onExit((e) => ok(e.exitCode)));
    expect(code, screen).toBe(0);
    const id = /\r\x1b\[K\S+ ([a-z0-9]{10}) busy · /.exec(screen)?.[1];
    expect(id, screen).toBeDefined();
    expect(screen).toMatch(new RegExp(`${id} busy · [12]s · \\d+(\\.\\d+k)? tokens \\(\\d+(\\.\\d+k)? out\\)`));
    // The line is cleared before the answer, which is printed plainly.
    expect(screen).toMatch(/\r\x1b\[KFAKE REPLY: FAKE_SLOW:2500 slowly\r\n/);
  });
});

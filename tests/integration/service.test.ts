/**
 * Issue 37 item 3: the server as a service. `service install --no-start` writes a systemd user unit for
 * `serve --http` that names no secret and that `systemd-analyze verify` accepts (that one assertion runs only where
 * systemd-analyze is installed); bad options are typed errors and write nothing. SIGTERM drains the HTTP server
 * (what `systemctl --user stop|restart` sends, KillMode=process): a tmux session lives on, a pty session is
 * hibernated, and the next server wakes it on its next prompt.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, hasPty, makeWorld, tmuxOrSkip, type World } from "../helpers/harness.js";
import { connectHttp, startHttpServer } from "../helpers/http.js";

const HAS_ANALYZE = spawnSync("systemd-analyze", ["--version"]).status === 0;

async function cli(
  w: World,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [CLI, ...args], { env: { ...w.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  p.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  p.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const status = await new Promise<number | null>((res) => p.on("exit", (c) => res(c)));
  return { status, stdout, stderr };
}

describe("service install", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld();
  });
  afterAll(() => w?.cleanup());

  it("writes a systemd user unit for serve --http with no secret in it, which systemd-analyze verify accepts", async () => {
    const r = await cli(w, ["service", "install", "--no-start", "--listen", "127.0.0.1:18914"], {
      CLAUDE_SESSIONS_TOKEN: "a-token-that-must-not-be-written-0123456789",
    });
    expect(r.status, r.stderr).toBe(0);
    const unit = join(w.home, ".config", "systemd", "user", "claude-sessions.service");
    const text = readFileSync(unit, "utf8");
    expect(text).toContain(`ExecStart="${process.execPath}" "${CLI}" serve --http 127.0.0.1:18914`);
    expect(text).toContain("KillMode=process");
    expect(text).toContain(`Environment="CLAUDE_SESSIONS_DIR=${w.stateDir}"`);
    expect(text).not.toContain("a-token-that-must-not-be-written");
    if (HAS_ANALYZE) {
      const v = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8", env: { ...process.env, HOME: w.home } });
      expect(v.status, v.stderr).toBe(0);
      // verify exits 0 on a line it ignores: it must not have complained about the unit at all.
      expect(`${v.stdout}${v.stderr}`).not.toContain(unit);
    }
  });

  it("bad options are typed errors and write nothing", async () => {
    const f = join(w.root, "loose.env");
    writeFileSync(f, "CLAUDE_SESSIONS_TOKEN=x\n", { mode: 0o644 });
    const cases: Array<[string[], RegExp]> = [
      [["service", "install", "--no-start", "--listen", "127.0.0.1:1; rm -rf /"], /INVALID_ARGUMENT: --listen/],
      [["service", "install", "--no-start", "--env-file", f], /PERMISSION_DENIED: --env-file .* mode 0600/],
      [["service", "install", "--no-start", "--bogus"], /INVALID_ARGUMENT: usage/],
      [["service", "restart"], /INVALID_ARGUMENT: usage/],
    ];
    const home = join(w.root, "other-home");
    for (const [args, why] of cases) {
      const r = await cli(w, args, { HOME: home });
      expect(r.status, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(why);
    }
    expect(existsSync(join(home, ".config", "systemd", "user", "claude-sessions.service"))).toBe(false);
  });
});

describe.runIf(tmuxOrSkip())("SIGTERM drains serve --http", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld();
  });
  afterAll(() => w?.cleanup());

  it("a tmux session lives on, a pty session is hibernated and wakes on the next server's prompt", async () => {
    const pty = await hasPty();
    const s1 = await startHttpServer(w);
    const c1 = await connectHttp(s1.url, s1.token);
    const t = await c1.callOk("start_session", { cwd: w.dir("tmux"), backend: "tmux" });
    await c1.callOk("send_message", { session_id: t.session_id, message: "first" });
    const p = pty ? await c1.callOk("start_session", { cwd: w.dir("pty"), backend: "pty" }) : undefined;
    if (p) await c1.callOk("send_message", { session_id: p.session_id, message: "first" });
    await c1.close();
    await s1.stop(); // SIGTERM
    expect(s1.proc.exitCode).toBe(0);
    const pane = w.tmux(["list-panes", "-a", "-F", "#{pane_dead}"]).trim();
    expect(pane.split("\n")).toContain("0");

    const s2 = await startHttpServer(w);
    const c2 = await connectHttp(s2.url, s2.token);
    try {
      const listed = await c2.callOk("list_sessions", { status_filter: "all" });
      const row = (id: string) => listed.sessions.find((x) => x.session_id === id);
      expect(row(t.session_id)?.status).toBe("idle");
      if (p) {
        expect(row(p.session_id)?.status).toBe("hibernated");
        const r = await c2.callOk("send_message", { session_id: p.session_id, message: "after the restart" });
        expect(r).toMatchObject({ completed: true, woke: true });
      }
      for (const id of [t.session_id, ...(p ? [p.session_id] : [])]) await c2.callOk("kill_session", { session_id: id });
    } finally {
      await c2.close();
      await s2.stop();
    }
  }, 120_000);
});

/**
 * start_session's sandbox with the fake claude on tmux (issue 32): the operator's switch and the caller's choice,
 * what a start says and list_sessions shows, a resume that keeps it, and every way a sandbox cannot be made —
 * refused with SANDBOX_UNAVAILABLE or INVALID_ARGUMENT, nothing started, never an unsandboxed session in its place.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { CLI, connect, FIXTURES, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";
import { sandboxDeps } from "../../src/sandbox/deps.js";

const RUN = tmuxOrSkip() && sandboxDeps().ok;

describe.runIf(RUN)("the sandbox on tmux (fake claude)", () => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld();
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("sandbox: true starts a sandboxed session: the result and the list row say so; the CLI runs under bubblewrap", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("a"), sandbox: true });
    expect(s.sandboxed).toBe(true);
    const row = (await m.callOk("list_sessions", {})).sessions.find((x: { session_id: string }) => x.session_id === s.session_id);
    expect(row?.sandboxed).toBe(true);
    // The launcher deleted its spec once read; the session's own config folder is there.
    const dir = join(w.stateDir, s.session_id as string);
    expect(existsSync(join(dir, "sandbox.json"))).toBe(false);
    expect(readdirSync(join(dir, "claude-config"))).toContain("projects");
    const tree = w.tmux(["list-panes", "-a", "-F", "#{pane_pid}"]).trim().split("\n");
    const cmdlines = tree.flatMap((pid) => descendants(Number(pid))).map((p) => cmdline(p));
    expect(cmdlines.some((c) => c.startsWith(`${sandboxDeps().tools?.bwrap} `))).toBe(true);
    // A turn, so there is a conversation (in the user's projects folder, through the session's link) to resume.
    const t = await m.callOk("send_message", { session_id: s.session_id, message: "hello" });
    expect(t.response).toContain("hello");
    await m.callOk("kill_session", { session_id: s.session_id });
    const r = await m.callOk("resume_session", { session_id: s.session_id });
    expect(r.sandboxed).toBe(true);
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("health_check says the sandbox can be made here", async () => {
    const h = await m.callOk("health_check", {});
    expect(h.checks.find((c) => c.name === "sandbox")).toMatchObject({
      status: "ok",
      detail: expect.stringContaining("CLAUDE_SESSIONS_SANDBOX=off"),
    });
  });

  it("run_task {sandbox: true} runs its session in the sandbox", async () => {
    const r = await m.callOk("run_task", {
      cwd: w.dir("task"),
      prompt: "boxed task",
      sandbox: true,
      backend: "tmux",
      keep_session: true,
    });
    const row = (await m.callOk("list_sessions", {})).sessions.find((x: { session_id: string }) => x.session_id === r.session_id);
    expect(row?.sandboxed).toBe(true);
    await m.callOk("kill_session", { session_id: r.session_id as string });
  });

  it("without sandbox, a session is not sandboxed (the default is off)", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("b") });
    expect(s.sandboxed).toBeUndefined();
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("CLAUDE_SESSIONS_SANDBOX=required refuses sandbox: false; on sandboxes a start that does not ask", async () => {
    const req = await connect(w, { CLAUDE_SESSIONS_SANDBOX: "required" });
    try {
      const r = await req.call("start_session", { cwd: w.dir("c"), sandbox: false });
      expect(r.error?.code, r.text).toBe("INVALID_ARGUMENT");
      expect(r.error?.message).toContain("CLAUDE_SESSIONS_SANDBOX=required");
    } finally {
      await req.close();
    }
    const on = await connect(w, { CLAUDE_SESSIONS_SANDBOX: "on" });
    try {
      const s = await on.callOk("start_session", { cwd: w.dir("d") });
      expect(s.sandboxed).toBe(true);
      await on.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await on.close();
    }
  });

  it("allow_hosts may narrow the operator's list, never widen it; a bad operator list is SANDBOX_UNAVAILABLE", async () => {
    const op = await connect(w, { CLAUDE_SESSIONS_SANDBOX_HOSTS: "*.example.org,api.github.com:443" });
    try {
      const wide = await op.call("start_session", { cwd: w.dir("e"), sandbox: { allow_hosts: ["evil.example.com"] } });
      expect(wide.error?.code, wide.text).toBe("INVALID_ARGUMENT");
      expect(wide.error?.message).toContain("evil.example.com");
      const bad = await op.call("start_session", { cwd: w.dir("e"), sandbox: { allow_hosts: ["http://x.example.org/"] } });
      expect(bad.error?.code, bad.text).toBe("INVALID_ARGUMENT");
      const s = await op.callOk("start_session", { cwd: w.dir("e"), sandbox: { allow_hosts: ["docs.example.org"] } });
      expect(s.sandboxed).toBe(true);
      await op.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await op.close();
    }
    const broken = await connect(w, { CLAUDE_SESSIONS_SANDBOX_HOSTS: "ok.example.org,not a host" });
    try {
      const r = await broken.call("start_session", { cwd: w.dir("f"), sandbox: true });
      expect(r.error?.code, r.text).toBe("SANDBOX_UNAVAILABLE");
      expect(r.error?.message).toContain("CLAUDE_SESSIONS_SANDBOX_HOSTS");
    } finally {
      await broken.close();
    }
  });

  it("a secret host file that does not parse, names a host not allowed, or a CA file without a certificate: SANDBOX_UNAVAILABLE, nothing started", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-secret-hosts-"));
    const bad = join(dir, "bad.json");
    writeFileSync(bad, '{"GH_TOKEN": ["api.github.com"', { mode: 0o600 });
    const wide = join(dir, "wide.json");
    writeFileSync(wide, JSON.stringify({ GH_TOKEN: ["evil.example"] }), { mode: 0o600 });
    const ca = join(dir, "ca.pem");
    writeFileSync(ca, "no certificate here\n");
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ CLAUDE_SESSIONS_SECRET_HOSTS: bad }, /secret host list cannot be used.*not JSON/],
      [{ CLAUDE_SESSIONS_SECRET_HOSTS: join(dir, "missing.json") }, /secret host list cannot be used.*ENOENT/],
      [
        { CLAUDE_SESSIONS_SECRET_HOSTS: wide, CLAUDE_SESSIONS_SANDBOX_HOSTS: "api.github.com" },
        /may not reach: GH_TOKEN: evil.example/,
      ],
      [{ CLAUDE_SESSIONS_SANDBOX_CA_FILE: ca }, /holds no PEM certificate/],
    ];
    for (const [env, why] of cases) {
      const op = await connect(w, env);
      try {
        const before = (await op.callOk("list_sessions", {})).sessions.length;
        const r = await op.call("start_session", { cwd: w.dir("s"), sandbox: true });
        expect(r.error?.code, r.text).toBe("SANDBOX_UNAVAILABLE");
        expect(r.error?.message).toMatch(why);
        expect((await op.callOk("list_sessions", {})).sessions.length).toBe(before);
        // An unsandboxed start does not read them.
        const plain = await op.call("start_session", { cwd: w.dir("s"), sandbox: false });
        expect(plain.ok, plain.text).toBe(true);
        await op.call("kill_session", { session_id: plain.data.session_id });
      } finally {
        await op.close();
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("no bubblewrap, socat or ripgrep: SANDBOX_UNAVAILABLE naming each, and no session was made", async () => {
    // A PATH with node and the fake claude only (tmux by its absolute path).
    const bin = mkdtempSync(join(tmpdir(), "cs-nobwrap-"));
    symlinkSync(process.execPath, join(bin, "node"));
    const bare = await connect(w, { PATH: `${bin}:${join(FIXTURES, "bin")}`, CLAUDE_SESSIONS_TMUX: "/usr/bin/tmux" });
    try {
      const before = (await bare.callOk("list_sessions", {})).sessions.length;
      const r = await bare.call("start_session", { cwd: w.dir("g"), sandbox: true });
      expect(r.error?.code, r.text).toBe("SANDBOX_UNAVAILABLE");
      for (const p of ["bwrap", "socat", "rg"]) expect(r.error?.message).toContain(p);
      expect((await bare.callOk("list_sessions", {})).sessions.length).toBe(before);
      // health_check (and doctor) say the same: a warning while the operator's default is off.
      const h = await bare.callOk("health_check", {});
      expect(h.checks.find((c) => c.name === "sandbox")).toMatchObject({
        status: "warn",
        detail: expect.stringContaining("bubblewrap"),
      });
    } finally {
      await bare.close();
    }
  });

  it("the CLI: start --sandbox runs one, --no-sandbox none, both at once is a usage error", async () => {
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 60_000, cwd: w.root });
    const on = cli("start", w.dir("cli-on"), "--sandbox", "--json");
    expect(on.status, on.stderr).toBe(0);
    const started = JSON.parse(on.stdout) as { session_id: string; sandboxed?: boolean };
    expect(started.sandboxed).toBe(true);
    const off = cli("start", w.dir("cli-off"), "--no-sandbox", "--json");
    expect(off.status, off.stderr).toBe(0);
    expect((JSON.parse(off.stdout) as { sandboxed?: boolean }).sandboxed).toBeUndefined();
    const both = cli("start", w.dir("cli-both"), "--sandbox", "--no-sandbox");
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain("INVALID_ARGUMENT");
    for (const o of [started, JSON.parse(off.stdout) as { session_id: string }])
      await m.callOk("kill_session", { session_id: o.session_id });
  });

  it("CLAUDE_SESSIONS_ALLOW_BYPASS=sandboxed: bypassPermissions only in the sandbox", async () => {
    const b = await connect(w, { CLAUDE_SESSIONS_ALLOW_BYPASS: "sandboxed" });
    try {
      const out = await b.call("start_session", { cwd: w.dir("yolo"), permission_mode: "bypassPermissions" });
      expect(out.error?.code, out.text).toBe("PERMISSION_DENIED");
      expect(out.error?.suggestion).toContain("sandbox: true");
      const boxed = await b.callOk("start_session", { cwd: w.dir("yolo"), permission_mode: "bypassPermissions", sandbox: true });
      expect(boxed).toMatchObject({ sandboxed: true, permission_mode: "bypassPermissions" });
      await b.callOk("kill_session", { session_id: boxed.session_id });
    } finally {
      await b.close();
    }
  });

  it("a caller's NODE_OPTIONS or LD_PRELOAD never reaches the launcher, even where the operator allows them", async () => {
    const allowing = await connect(w, { CLAUDE_SESSIONS_ALLOW_ENV: "NODE_OPTIONS,LD_*" });
    try {
      const envs: Array<Record<string, string>> = [
        { NODE_OPTIONS: `--require ${join(w.root, "evil.js")}` },
        { LD_PRELOAD: join(w.root, "evil.so") },
      ];
      for (const env of envs) {
        const r = await allowing.call("start_session", { cwd: w.dir("envs"), sandbox: true, env });
        expect(r.error?.code, r.text).toBe("INVALID_ARGUMENT");
        expect(r.error?.message).toContain(Object.keys(env)[0]);
      }
    } finally {
      await allowing.close();
    }
  });

  it("the launcher relays only to a server socket of its state directory: another socket named in its environment is refused (exit 125)", () => {
    const dir = join(w.stateDir, "relay-probe");
    const cwd = w.dir("relay-probe");
    mkdirSync(dir, { recursive: true });
    const spec = {
      v: 1,
      argv: ["/bin/true"],
      cwd,
      sessionDir: dir,
      realConfigDir: join(w.root, "cfg"),
      realConfigFile: join(w.root, ".claude.json"),
      copyCredentials: false,
      allowHosts: ["127.0.0.1:9"],
      allowWrite: [],
      denyRead: [],
      allowRead: [],
      tools: sandboxDeps().tools,
    };
    const run = (socket: string) => {
      writeFileSync(join(dir, "sandbox.json"), JSON.stringify(spec), { mode: 0o600 });
      return spawnSync(process.execPath, [join(CLI, "..", "sandbox", "launcher.js"), join(dir, "sandbox.json")], {
        env: { PATH: process.env.PATH, HOME: w.home, CLAUDE_SESSIONS_MEMBER_SOCKET: socket },
        encoding: "utf8",
        timeout: 60_000,
      });
    };
    for (const socket of [
      join(w.root, "docker.sock"),
      join(w.stateDir, "sockets", "..", "x.sock"),
      join(w.stateDir, "sockets", "a.sock"),
    ]) {
      const r = run(socket);
      expect(r.status, r.stderr).toBe(125);
      expect(r.stderr).toContain("is not a server socket");
    }
    const ok = run(join(w.stateDir, "sockets", "123.sock"));
    expect(ok.status, ok.stderr).toBe(0);
  });

  it("a team session runs sandboxed: its launcher listens on the one member relay socket of its folder", async () => {
    const t = await m.callOk("start_session", { cwd: w.dir("h"), sandbox: true, team_name: "crew" });
    expect(t.sandboxed).toBe(true);
    const row = (await m.callOk("list_sessions", {})).sessions.find((x: { session_id: string }) => x.session_id === t.session_id);
    expect(row?.sandboxed).toBe(true);
    const relay = join(w.stateDir, t.session_id as string, "member-relay.sock");
    expect(statSync(relay).isSocket()).toBe(true);
    expect(statSync(relay).mode & 0o777).toBe(0o600);
    await m.callOk("kill_session", { session_id: t.session_id });
  });
});

function descendants(pid: number): number[] {
  const out: number[] = [pid];
  for (const t of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${t}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(...descendants(Number(t)));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

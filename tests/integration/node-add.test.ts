/**
 * `claude-sessions nodes add` (issue 36 item 2) against test hosts (network namespaces running sshd, each with its
 * own user and no network beyond the coordinator): the host's checks are reported, this exact claude-sessions is
 * installed there from the coordinator's own packed copy (no registry: its dependencies travel in the package), the
 * node's entry is written to nodes.json (0600), and the node then answers through its link — a session started on it
 * runs the installed copy. A package whose SHA-256 is not the one given is refused on the host: nothing is installed
 * (the version's directory does not exist) and nodes.json is unchanged. A taken name and a target that would be an
 * ssh option are refused before anything is sent. `nodes upgrade`: a busy session refuses it (or --wait waits for it);
 * idle ones are hibernated, the node upgraded, and they are woken by the new version — live again with no prompt,
 * in the same conversation.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, FIXTURES, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { makeTestHosts, testHostsOrSkip, type TestHost, type TestHosts } from "../helpers/test-hosts.mjs";

const enabled = tmuxOrSkip() && testHostsOrSkip();
const VERSION = (JSON.parse(readFileSync(join(CLI, "..", "..", "package.json"), "utf8")) as { version: string }).version;

function cli(w: World, args: string[], timeout = 600_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((ok) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: w.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    const t = setTimeout(() => p.kill("SIGKILL"), timeout);
    p.on("close", (code) => {
      clearTimeout(t);
      ok({ code, out, err });
    });
  });
}

/** The ssh -o options that reach a test host (its key from its exec command). */
function sshOpts(h: TestHost): string[] {
  const key = h.exec[h.exec.indexOf("-i") + 1]!;
  return [
    `IdentityFile=${key}`,
    "BatchMode=yes",
    "StrictHostKeyChecking=no",
    "UserKnownHostsFile=/dev/null",
    "LogLevel=ERROR",
    "ConnectTimeout=5",
  ].flatMap((o) => ["--ssh-opt", o]);
}

/** The host's own settings, as an operator's ~/.ssh/environment would hold them: node and claude on its PATH. */
function prepare(h: TestHost): void {
  h.setUserEnv({
    PATH: [dirname(process.execPath), join(FIXTURES, "bin"), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    LANG: "C.UTF-8",
    CLAUDE_SESSIONS_DIR: h.stateDir,
    CLAUDE_SESSIONS_TMUX_SOCKET: h.socket,
    CLAUDE_PATH: join(FIXTURES, "bin", "claude"),
    CLAUDE_SESSIONS_START_TIMEOUT_MS: "15000",
  });
}

/** Runs a script on the host with sh (quoted: ssh joins its words into one line for the host's shell). */
const sh = (h: TestHost, script: string) => h.ssh(["sh", "-c", `'${script}'`]);
const installed = (h: TestHost, version: string) =>
  sh(h, `test -e .local/lib/claude-sessions/${version} && echo yes || echo no`).trim() === "yes";

describe.skipIf(!enabled)("nodes add", () => {
  let hosts: TestHosts;
  let h1: TestHost;
  let h2: TestHost;
  let w: World;
  let nodesFile: string;

  beforeAll(() => {
    hosts = makeTestHosts(2, { tag: `a${process.pid % 1000}` });
    [h1, h2] = hosts.hosts as [TestHost, TestHost];
    for (const h of [h1, h2]) prepare(h);
    w = makeWorld();
    nodesFile = join(w.stateDir, "nodes.json");
  }, 120_000);

  afterAll(() => {
    w?.cleanup();
    hosts?.destroy();
  });

  it("checks the host, installs this version there, writes the entry; the node then answers through its link", async () => {
    const r = await cli(w, ["nodes", "add", "n1", `${h1.user}@${h1.address}`, ...sshOpts(h1)]);
    console.log(r.out);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    for (const check of ["node: v", "tmux: tmux ", "claude: ", "memory: ", "platform: "])
      expect(r.out).toMatch(new RegExp(`^ok {3}${check}`, "m"));
    expect(r.out).toContain(`installed in ~/.local/lib/claude-sessions/${VERSION}`);
    // What was installed is this version, unpacked with its dependencies, and the SHA-256 the coordinator computed.
    const sha = /sha256 ([0-9a-f]{64})/.exec(r.out)![1]!;
    expect(h1.ssh(["cat", `.local/lib/claude-sessions/${VERSION}/.sha256`]).trim()).toBe(sha);
    expect(JSON.parse(h1.ssh(["cat", `.local/lib/claude-sessions/${VERSION}/package.json`])).version).toBe(VERSION);
    expect(sh(h1, `ls .local/lib/claude-sessions/${VERSION}/node_modules`)).toContain("@modelcontextprotocol");
    // nodes.json: the operator's file, 0600, with the node's ssh command running the installed copy.
    expect(statSync(nodesFile).mode & 0o777).toBe(0o600);
    const entry = (JSON.parse(readFileSync(nodesFile, "utf8")) as { nodes: Record<string, { exec: string[]; attach: string[] }> })
      .nodes.n1!;
    expect(entry.exec.slice(-2)).toEqual(["node", ".local/lib/claude-sessions/current/dist/bin.js"]);
    expect(sh(h1, "readlink .local/lib/claude-sessions/current").trim()).toBe(VERSION);
    expect(entry.attach[entry.attach.length - 1]).toBe("--");
    // `claude-sessions nodes` reaches it at this version (no "differs").
    const n = await cli(w, ["nodes"], 60_000);
    expect(n.out).toMatch(new RegExp(`^n1\\treachable\\tclaude-sessions ${VERSION.replaceAll(".", "\\.")}\\thealth ok`, "m"));
    expect(n.out).not.toContain("differs");
    expect(n.code).toBe(0);
    // A session on the node runs and answers (the installed server, its bundled dependencies).
    const m = await connect(w);
    try {
      const s = await m.callOk("start_session", { cwd: h1.work, node: "n1" });
      expect((await m.callOk("send_message", { session_id: s.session_id, message: "hello node" })).response).toBe(
        "FAKE REPLY: hello node",
      );
      const ps = sh(h1, "ps -o args= -u $(id -u)");
      expect(ps).toContain(".local/lib/claude-sessions/current/dist/bin.js");
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
    // The same name again is refused (nothing sent), and --replace is how to overwrite it.
    const again = await cli(w, ["nodes", "add", "n1", `${h2.user}@${h2.address}`, ...sshOpts(h2)], 60_000);
    expect(again.code).toBe(1);
    expect(again.err).toContain("ALREADY_EXISTS");
    expect(again.err).toContain("--replace");
    expect(installed(h2, VERSION)).toBe(false);
  }, 600_000);

  it("a package whose SHA-256 is not the one given is refused on the host: nothing installed, nodes.json unchanged", async () => {
    const before = existsSync(nodesFile) ? readFileSync(nodesFile, "utf8") : undefined;
    const dir = w.dir("pkg");
    mkdirSync(join(dir, "package"));
    writeFileSync(join(dir, "package", "package.json"), JSON.stringify({ name: "claude-sessions", version: "9.9.9" }));
    const { spawnSync } = await import("node:child_process");
    expect(spawnSync("tar", ["-czf", join(dir, "p.tgz"), "-C", dir, "package"]).status).toBe(0);
    const r = await cli(w, [
      "nodes",
      "add",
      "n2",
      `${h2.user}@${h2.address}`,
      ...sshOpts(h2),
      "--package",
      join(dir, "p.tgz"),
      "--sha256",
      "0".repeat(64),
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("INVALID_ARGUMENT");
    expect(r.err).toContain("refused the package");
    expect(r.err).toContain("nothing was installed");
    expect(installed(h2, "9.9.9")).toBe(false);
    expect(sh(h2, "ls -A .cache/claude-sessions/pkg 2>/dev/null | wc -l").trim()).toBe("0");
    expect(existsSync(nodesFile) ? readFileSync(nodesFile, "utf8") : undefined).toBe(before);
  }, 120_000);

  it("a target that would be an ssh option, or a bad name, is refused before anything runs", async () => {
    for (const [args, what] of [
      [["n3", "-oProxyCommand=touch /tmp/x@h"], "usage:"],
      [["n3", "u@-oProxyCommand=id"], "is not user@host"],
      [["n3", "u@h;id"], "is not user@host"],
      [["local", `${h2.user}@${h2.address}`], "is not a node name"],
      [["n3", `${h2.user}@${h2.address}`, "--ssh-opt", "-F/dev/null"], "is not an ssh option"],
    ] as Array<[string[], string]>) {
      const r = await cli(w, ["nodes", "add", ...args], 60_000);
      expect(r.code).toBe(1);
      expect(r.err).toContain("INVALID_ARGUMENT");
      expect(r.err).toContain(what);
    }
  }, 120_000);

  describe("nodes upgrade", () => {
    let m: Mcp;
    let busyId: string;
    let idleId: string;
    let claudeId: string;
    const OLD = "0.0.9";
    const lib = () => join(h1.home, ".local", "lib", "claude-sessions");

    beforeAll(async () => {
      // n1 (added above) runs an older version: the installed copy renamed and relabelled, `current` pointing at it.
      renameSync(join(lib(), VERSION), join(lib(), OLD));
      const pj = join(lib(), OLD, "package.json");
      writeFileSync(pj, readFileSync(pj, "utf8").replace(`"version": "${VERSION}"`, `"version": "${OLD}"`));
      rmSync(join(lib(), "current"));
      symlinkSync(OLD, join(lib(), "current"));
      h1.chownHome();
      m = await connect(w);
    }, 60_000);

    afterAll(async () => {
      await m?.close().catch(() => {});
    });

    it("a busy session refuses the upgrade with its id; nothing changes", async () => {
      const n = await cli(w, ["nodes"], 60_000);
      expect(n.out).toContain(`claude-sessions ${OLD}`);
      expect(n.out).toContain(`version differs from this machine's ${VERSION}`);
      busyId = (await m.callOk("start_session", { cwd: h1.work, node: "n1" })).session_id as string;
      idleId = (await m.callOk("start_session", { cwd: h1.work, node: "n1" })).session_id as string;
      expect((await m.callOk("send_message", { session_id: idleId, message: "remember the apple" })).response).toBe(
        "FAKE REPLY: remember the apple",
      );
      claudeId = (await m.callOk("list_sessions", {})).sessions.find((r) => r.session_id === idleId)!.claude_session_id as string;
      await m.callOk("send_message", { session_id: busyId, message: "FAKE_SLOW:20000 long", wait_for_response: false });
      const nodesBefore = readFileSync(nodesFile, "utf8");
      const r = await cli(w, ["nodes", "upgrade", "n1"]);
      expect(r.code).toBe(1);
      expect(r.err).toContain("SESSION_BUSY");
      expect(r.err).toContain(busyId);
      expect(r.err).toContain("nothing was changed");
      expect(r.err).not.toContain(idleId);
      // Nothing changed: the old version runs, the new one is not there, the idle session is not hibernated.
      expect(sh(h1, "readlink .local/lib/claude-sessions/current").trim()).toBe(OLD);
      expect(installed(h1, VERSION)).toBe(false);
      expect(readFileSync(nodesFile, "utf8")).toBe(nodesBefore);
      const rows = (await m.callOk("list_sessions", {})).sessions;
      expect(rows.find((x) => x.session_id === busyId)!.status).toBe("busy");
      expect(rows.find((x) => x.session_id === idleId)!.status).toBe("idle");
      expect(
        await m.callOk("wait_for_completion", { session_id: busyId, timeout_ms: 60_000 }, { timeout: 90_000 }),
      ).toMatchObject({ completed: true });
    }, 180_000);

    it("idle sessions are hibernated, the node upgraded and its link back at the new version, then woken there: live again without a prompt, in the same conversation", async () => {
      const r = await cli(w, ["nodes", "upgrade"]);
      console.log(r.out);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toContain(`n1: claude-sessions ${OLD} → ${VERSION}`);
      for (const id of [busyId, idleId]) expect(r.out).toContain(`n1: hibernated ${id}`);
      expect(r.out).toContain(`n1: answers at claude-sessions ${VERSION}`);
      expect(sh(h1, "readlink .local/lib/claude-sessions/current").trim()).toBe(VERSION);
      // The serving coordinator's link came back by itself, at the new version.
      await until(async () => !(await cli(w, ["nodes"], 60_000)).out.includes("differs"), 60_000, 500);
      await until(
        async () =>
          (await m.callOk("list_sessions", { node_filter: "n1", status_filter: "all" })).nodes?.[0]?.status === "reachable",
        60_000,
        200,
      );
      // The sessions it hibernated were woken by the new version: live again, no prompt sent, the same conversation.
      for (const id of [busyId, idleId]) expect(r.out).toMatch(new RegExp(`^n1: woke ${id} \\((idle|ready)\\)$`, "m"));
      const rows = (await m.callOk("list_sessions", { status_filter: "all" })).sessions;
      for (const id of [busyId, idleId]) expect(rows.find((x) => x.session_id === id)!.status).toMatch(/^(idle|ready)$/);
      expect(rows.find((x) => x.session_id === idleId)).toMatchObject({ claude_session_id: claudeId });
      // The next prompt goes to the running session (no wake) and continues that conversation, run by the new version.
      let woke: Record<string, unknown> | undefined;
      await until(
        async () => {
          const x = await m.call("send_message", { session_id: idleId, message: "what was it?" });
          if (x.error?.code === "NODE_UNREACHABLE") return false;
          woke = x.data as Record<string, unknown>;
          return true;
        },
        60_000,
        200,
      );
      expect(woke).toMatchObject({ completed: true, response: "FAKE REPLY: what was it?" });
      expect(woke!.woke).toBeUndefined();
      const after = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === idleId)!;
      expect(after).toMatchObject({ status: "idle", claude_session_id: claudeId });
      const t = JSON.stringify(await m.callOk("stream_output", { session_id: idleId, mode: "transcript" }));
      expect(t).toContain("remember the apple");
      expect(t).toContain("what was it?");
    }, 600_000);

    it("--wait waits for a busy session's turn, then upgrades", async () => {
      // An older version installed beside the current one (a copy, relabelled) and made current.
      const older = "0.0.8";
      cpSync(join(lib(), VERSION), join(lib(), older), { recursive: true, verbatimSymlinks: true });
      const pj = join(lib(), older, "package.json");
      writeFileSync(pj, readFileSync(pj, "utf8").replace(`"version": "${VERSION}"`, `"version": "${older}"`));
      rmSync(join(lib(), "current"));
      symlinkSync(older, join(lib(), "current"));
      h1.chownHome();
      await m.callOk("send_message", { session_id: busyId, message: "FAKE_SLOW:45000 finish this", wait_for_response: false });
      // A turn long enough to be running when the command (its start, its link, a listing: seconds under load) looks.
      const r = await cli(w, ["nodes", "upgrade", "n1", "--wait"]);
      console.log(r.out);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toContain(`n1: claude-sessions ${older} → ${VERSION}`);
      expect(r.out).toContain(`n1: waiting for ${busyId} (busy)`);
      expect(r.out).toContain(`n1: hibernated ${busyId}`);
      expect(sh(h1, "readlink .local/lib/claude-sessions/current").trim()).toBe(VERSION);
      // The turn it waited for ended with its reply: nothing was cut short.
      const t = JSON.stringify(await m.callOk("stream_output", { session_id: busyId, mode: "transcript" }));
      expect(t).toContain("FAKE REPLY: FAKE_SLOW:45000 finish this");
      for (const id of [busyId, idleId]) await m.callOk("kill_session", { session_id: id });
    }, 600_000);
  });
});

/**
 * The real Claude Code CLI on a far node (issue #22): a test host (network namespace + sshd, a user of its own) runs
 * the node's server with the real CLI, which reaches the mock Messages API over the namespace's link (the mock bound
 * on the host's gateway address). The API key and the offline block reach the node through its ~/.ssh/environment,
 * never an argv. Driven through a coordinator by id alone.
 */
import {
  chmodSync,
  copyFileSync,
  linkSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareClaudeHome } from "../fixtures/claude-home.js";
import { startMockApi, type MockApi } from "../fixtures/mock-anthropic.js";
import { connect, makeWorld, type Mcp, type World } from "../helpers/harness.js";
import { API_KEY, REAL_CLAUDE, realClaudeOrSkip, realClaudeVersion } from "../helpers/real-claude.js";
import { makeTestHosts, testHostsOrSkip, writeNodesFile, type TestHost, type TestHosts } from "../helpers/test-hosts.mjs";

const run = realClaudeOrSkip() && testHostsOrSkip();

/**
 * The CLI under test as a path the test host's user can reach: a version from `npm run test:cli`'s cache lies under
 * root's HOME (0700), so it is linked (or copied) into a folder of its own under the temp directory.
 */
function reachableCli(): { path: string; cleanup(): void } {
  const real = realpathSync(REAL_CLAUDE);
  let ok = true;
  for (let d = dirname(real); ok && d !== dirname(d); d = dirname(d)) ok = (statSync(d).mode & 0o001) !== 0;
  if (ok) return { path: REAL_CLAUDE, cleanup() {} };
  const dir = mkdtempSync(join(tmpdir(), "cs-cli-"));
  chmodSync(dir, 0o755);
  const path = join(dir, "claude");
  try {
    linkSync(real, path);
  } catch {
    copyFileSync(real, path);
  }
  chmodSync(path, 0o755);
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe.runIf(run)("real claude on a far node", () => {
  let hosts: TestHosts;
  let h: TestHost;
  let mock: MockApi;
  let w: World;
  let m: Mcp;
  let cli: { path: string; cleanup(): void } | undefined;

  beforeAll(async () => {
    cli = reachableCli();
    // The node reaches the mock API over plain HTTP on the test link: its operator accepts that for sandboxed sessions.
    hosts = makeTestHosts(1, {
      env: { CLAUDE_PATH: cli.path, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000", CLAUDE_SESSIONS_SANDBOX_PLAINTEXT_API: "1" },
    });
    h = hosts.hosts[0]!;
    mock = await startMockApi({ host: h.gateway });
    const prepared = await prepareClaudeHome({
      home: h.home,
      apiKey: API_KEY,
      trustedDirs: [h.work],
      mockUrl: mock.url,
      cliVersion: realClaudeVersion() ?? "2.1.330",
    });
    h.chownHome();
    h.setUserEnv(prepared.env);
    w = makeWorld();
    w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, { far: { exec: h.exec, attach: h.attach } });
    m = await connect(w);
  });

  afterAll(async () => {
    expect(mock?.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await m?.close().catch(() => {});
    w?.cleanup();
    hosts?.destroy();
    await mock?.close();
    cli?.cleanup();
  });

  it("starts on the node, answers through the mock over the link, and is killed by id", async () => {
    const s = await m.callOk("start_session", { cwd: h.work, node: "far" }, { timeout: 90_000 });
    expect(s.node).toBe("far");
    const r = await m.callOk(
      "send_message",
      { session_id: s.session_id, message: "hello over the wire", timeout_ms: 60_000 },
      { timeout: 90_000 },
    );
    expect(r).toMatchObject({ response: "MOCK REPLY: hello over the wire", node: "far" });
    expect(mock.mainRequests().some((x) => x.lastUserText === "hello over the wire")).toBe(true);
    // The key is the node's environment, not anyone's command line.
    expect(h.exec.join(" ")).not.toContain(API_KEY);
    const k = await m.callOk("kill_session", { session_id: s.session_id });
    expect(k.status).toBe("killed");
  });

  it("sandbox: true on the node: its Claude Code runs under the node's bubblewrap, sandboxed in the coordinator's list, and ~/.ssh reads as empty there", async () => {
    const s = await m.callOk(
      "start_session",
      { cwd: h.work, node: "far", sandbox: true, allowed_tools: ["Bash"] },
      { timeout: 90_000 },
    );
    expect(s).toMatchObject({ node: "far", sandboxed: true });
    const row = (await m.callOk("list_sessions", {})).sessions.find((x: { session_id: string }) => x.session_id === s.session_id);
    expect(row).toMatchObject({ node: "far", sandboxed: true });
    // A bubblewrap process of the node's user holds the session's Claude Code (the node's own launcher built it).
    // (The host shares this machine's process table: its user's processes are read from /proc.)
    const uid = statSync(h.home).uid;
    const bwraps = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "bwrap" && statSync(`/proc/${p}`).uid === uid;
        } catch {
          return false;
        }
      });
    expect(bwraps.length).toBeGreaterThan(0);
    // The node user's ~/.ssh holds its authorized_keys (the test host's sshd logs it in with them): unreadable inside.
    const before = mock.requests.length;
    const r = await m.callOk(
      "send_message",
      {
        session_id: s.session_id,
        message: `MOCK_BASH:cat ${h.home}/.ssh/authorized_keys 2>/dev/null || echo SSH-UNREADABLE; ls -A ${h.home}/.ssh | wc -l | sed 's/^/SSH-ENTRIES=/'`,
        timeout_ms: 60_000,
      },
      { timeout: 90_000 },
    );
    expect(r.node).toBe("far");
    const out = mock.requests.slice(before).find((q) => q.toolResult)?.toolResult?.text ?? "";
    expect(out).toContain("SSH-UNREADABLE");
    expect(out).toContain("SSH-ENTRIES=0");
    expect(out).not.toMatch(/ssh-(ed25519|rsa) /);
    // The same file is there outside the sandbox.
    expect(readdirSync(join(h.home, ".ssh")).length).toBeGreaterThan(0);
    await m.callOk("kill_session", { session_id: s.session_id });
  });
});

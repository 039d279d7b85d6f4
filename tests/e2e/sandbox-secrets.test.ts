/**
 * Secrets that never enter the sandbox (issue 32), with the real Claude Code CLI against the mock API: a session's
 * `env` secret and the API key read as sentinels inside; an allowed HTTPS host (a test CA, CLAUDE_SESSIONS_SANDBOX_CA_FILE)
 * listed for the secret in CLAUDE_SESSIONS_SECRET_HOSTS receives the real value from a `MOCK_BASH:` curl; another
 * allowed host receives the sentinel; the session's process environment, transcript, tool results, config and every
 * file of the state directory hold only sentinels; refused connections and sentinels sent elsewhere are counted
 * (sandbox_violations) and the count survives a server restart.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractBackends, type Mcp } from "../helpers/harness.js";
import { API_KEY, e2eWorld, realClaudeOrSkip, toolResultOf, type E2e } from "../helpers/real-claude.js";
import { sandboxDeps } from "../../src/sandbox/deps.js";

const run = realClaudeOrSkip() && sandboxDeps().ok;
const BACKENDS: Array<"tmux" | "pty" | "headless"> = run ? [...(await contractBackends()), "headless"] : [];

const SECRET = "deploy-secret-Q7f3x9LmZpR2vKw8";
const DOPPLER_VALUE = "doppler-secret-Vb6tYu2Qe";

/** A test CA and a certificate for `ip` signed by it (openssl, EC keys). */
function makeCerts(dir: string, ips: string[]): { ca: string; certs: Array<{ key: string; cert: string }> } {
  const o = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  o([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=claude-sessions test CA",
  ]);
  const certs = ips.map((ip, i) => {
    writeFileSync(join(dir, `ext${i}`), `subjectAltName=IP:${ip}\n`);
    o([
      "req",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      `h${i}.key`,
      "-out",
      `h${i}.csr`,
      "-subj",
      `/CN=${ip}`,
    ]);
    o([
      "x509",
      "-req",
      "-in",
      `h${i}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `h${i}.pem`,
      "-days",
      "2",
      "-extfile",
      `ext${i}`,
    ]);
    return { key: readFileSync(join(dir, `h${i}.key`), "utf8"), cert: readFileSync(join(dir, `h${i}.pem`), "utf8") };
  });
  return { ca: join(dir, "ca.pem"), certs };
}

async function httpsHost(
  ip: string,
  tls: { key: string; cert: string },
  seen: string[],
): Promise<{ server: Server; port: number }> {
  const server = createServer(tls, (req, res) => {
    seen.push(String(req.headers.authorization ?? ""));
    res.end("HOST-ANSWERED\n");
  });
  await new Promise<void>((r) => server.listen(0, ip, r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Every file under `dir` (following no links) that contains `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && statSync(p).size < 50_000_000 && readFileSync(p).includes(needle)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

describe.each(BACKENDS)("real claude, secrets masked in the sandbox (%s)", (backend) => {
  let e: E2e;
  let m: Mcp;
  let id: string;
  const atA: string[] = [];
  const atB: string[] = [];
  let a: { server: Server; port: number };
  let b: { server: Server; port: number };
  let certDir: string;
  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), "cs-certs-"));
    const { ca, certs } = makeCerts(certDir, ["127.0.0.1", "127.0.0.2"]);
    a = await httpsHost("127.0.0.1", certs[0]!, atA);
    b = await httpsHost("127.0.0.2", certs[1]!, atB);
    const hostsFile = join(certDir, "secret-hosts.json");
    writeFileSync(hostsFile, JSON.stringify({ DEPLOY_TOKEN: [`127.0.0.1:${a.port}`], "UNUSED_*": [`127.0.0.2:${b.port}`] }), {
      mode: 0o600,
    });
    const copy = ca;
    const dopplerData = join(certDir, "doppler.json");
    writeFileSync(
      dopplerData,
      JSON.stringify({ tokens: { "dp.st.server-own-token": {} }, projects: { api: { dev: { VAULT_SECRET: DOPPLER_VALUE } } } }),
      { mode: 0o600 },
    );
    e = await e2eWorld({
      dirs: ["boxed", "dopp"],
      serverEnv: {
        CLAUDE_SESSIONS_SANDBOX_HOSTS: `127.0.0.1:${a.port},127.0.0.2:${b.port}`,
        CLAUDE_SESSIONS_SECRET_HOSTS: hostsFile,
        CLAUDE_SESSIONS_SANDBOX_CA_FILE: copy,
        DOPPLER_TOKEN: "dp.st.server-own-token",
        DOPPLER_PATH: join(import.meta.dirname, "..", "fixtures", "doppler-bin", "doppler"),
        FAKE_DOPPLER_DATA: dopplerData,
      },
    });
    m = await e.connect();
    const s = await m.call("start_session", {
      cwd: e.dir("boxed"),
      permission_mode: "default",
      allowed_tools: ["Bash"],
      backend,
      sandbox: true,
      env: { DEPLOY_TOKEN: SECRET, OTHER_SECRET: "other-secret-Hn4pW1" },
    });
    expect(s.ok, s.text).toBe(true);
    expect(s.data.sandboxed, s.text).toBe(true);
    id = s.data.session_id as string;
    if (process.env.CS_DEBUG_SB)
      console.log(
        execFileSync(
          "sh",
          [
            "-c",
            `ls -la ${e.world.stateDir}/${id}; cat ${e.world.stateDir}/${id}/output.log | head -c 3000; ps -ef | grep -v grep | grep -E 'launcher|bwrap' | head`,
          ],
          { encoding: "utf8" },
        ),
      );
  });
  afterAll(async () => {
    await m?.call("kill_session", { session_id: id });
    await m?.close();
    await new Promise((r) => a?.server.close(r));
    await new Promise((r) => b?.server.close(r));
    await e?.cleanup();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  const tool = (message: string): Promise<string> => toolResultOf(e, m, id, message);

  async function violations(): Promise<number> {
    const l = await m.call("list_sessions", {});
    const row = (l.data.sessions as Array<Record<string, unknown>>).find((x) => x.session_id === id);
    return (row?.sandbox_violations as number | undefined) ?? 0;
  }

  it("inside, the secrets and the API key are sentinels; DOPPLER_TOKEN is not there", async () => {
    const out = await tool("MOCK_BASH:env");
    expect(out).toMatch(/^DEPLOY_TOKEN=fake_value_/m);
    expect(out).toMatch(/^OTHER_SECRET=fake_value_/m);
    expect(out).toMatch(/^ANTHROPIC_API_KEY=sk-ant-sandbox-/m);
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain("other-secret-Hn4pW1");
    expect(out).not.toContain(API_KEY);
    expect(out).not.toContain("dp.st.server-own-token");
  });

  it("the host listed for the secret receives its real value over verified TLS; the tool result shows none of it", async () => {
    const out = await tool(
      `MOCK_BASH:curl -sS -m 20 -H "Authorization: Bearer $DEPLOY_TOKEN" https://127.0.0.1:${a.port}/a; echo CURL-DONE`,
    );
    expect(out).toContain("HOST-ANSWERED");
    expect(atA).toEqual([`Bearer ${SECRET}`]);
    expect(out).not.toContain(SECRET);
  });

  it("another allowed host receives the sentinel, not the secret, and the leak is counted", async () => {
    const before = await violations();
    const out = await tool(
      `MOCK_BASH:curl -sS -m 20 -H "Authorization: Bearer $DEPLOY_TOKEN" https://127.0.0.2:${b.port}/b; echo CURL-DONE`,
    );
    expect(out).toContain("HOST-ANSWERED");
    expect(atB).toHaveLength(1);
    expect(atB[0]).toMatch(/^Bearer fake_value_/);
    expect(atB[0]).not.toContain(SECRET);
    await expect.poll(violations, { timeout: 15_000 }).toBeGreaterThan(before);
  });

  it("a refused connection is counted too; the session still answers; the count is in wait results", async () => {
    const before = await violations();
    await tool(`MOCK_BASH:curl -sS -m 10 http://127.0.0.1:9/x; echo CURL-DONE`);
    await expect.poll(violations, { timeout: 15_000 }).toBeGreaterThan(before);
    const r = await m.call("send_message", { session_id: id, message: "still answering" });
    expect(r.data.response, r.text).toBe("MOCK REPLY: still answering");
    expect(r.data.sandbox_violations).toBeGreaterThanOrEqual(2);
  });

  it("Claude Code's own process environment, its transcript, its config and the state directory hold only sentinels", async () => {
    // Claude Code's process (inside the sandbox): the one whose environment names this session and carries the API key's sentinel.
    const envs: string[] = [];
    const claude = realpathSync(e.env.CLAUDE_PATH!);
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      let text: string;
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        if (![argv[0], argv[1]].some((x) => x && (x === claude || x === e.env.CLAUDE_PATH))) continue;
        text = readFileSync(`/proc/${pid}/environ`, "utf8");
      } catch {
        continue;
      }
      if (text.includes(`CLAUDE_SESSIONS_ID=${id}`) && text.includes("ANTHROPIC_API_KEY=sk-ant-sandbox-")) envs.push(text);
    }
    expect(envs.length).toBeGreaterThan(0);
    // Every other process of the session but the launcher itself (which holds the real environment, outside): its
    // shell and bubblewrap too.
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        const text = readFileSync(`/proc/${pid}/environ`, "utf8");
        if (!text.includes(`CLAUDE_SESSIONS_ID=${id}`)) continue;
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        if (argv.some((a) => a.endsWith("sandbox/launcher.js")) || argv.some((a) => a.endsWith("/doppler"))) continue;
        expect(text.includes(SECRET) || text.includes(API_KEY), argv.slice(0, 3).join(" ")).toBe(false);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code) continue;
        throw err;
      }
    }
    for (const t of envs) {
      expect(t).not.toContain(SECRET);
      expect(t).not.toContain(API_KEY);
      expect(t).toMatch(/DEPLOY_TOKEN=fake_value_/);
    }
    const projects = join(e.world.home, ".claude", "projects");
    for (const needle of [SECRET, "other-secret-Hn4pW1", API_KEY, API_KEY.slice(-20)]) {
      expect(filesHolding(e.world.stateDir, needle), needle).toEqual([]);
      expect(filesHolding(projects, needle), needle).toEqual([]);
    }
    // The transcript did see the tool output: sentinels.
    expect(filesHolding(projects, "fake_value_").length).toBeGreaterThan(0);
  });

  it("under doppler run: what Doppler adds is a sentinel inside; the terminal's and the server's plain variables are not", async () => {
    if (backend === "headless") return; // headless sessions do not run under doppler (docs/configuration.md)
    const s = await m.call("start_session", {
      cwd: e.dir("dopp"),
      permission_mode: "default",
      allowed_tools: ["Bash"],
      backend,
      sandbox: true,
      doppler: { project: "api", config: "dev" },
    });
    expect(s.ok, s.text).toBe(true);
    const sid = s.data.session_id as string;
    try {
      const before = e.mock.requests.length;
      const r = await m.call("send_message", { session_id: sid, message: "MOCK_BASH:env" });
      expect(r.ok, r.text).toBe(true);
      const out = e.mock.requests.slice(before).find((q) => q.toolResult)?.toolResult?.text ?? "";
      expect(out).toMatch(/^VAULT_SECRET=fake_value_/m);
      expect(out).not.toContain(DOPPLER_VALUE);
      expect(out).not.toMatch(/^DOPPLER_TOKEN=/m);
      expect(out).toMatch(/^TERM=(?!fake_value_)/m);
      expect(out).toMatch(/^HOME=\//m);
      expect(out).toMatch(/^ANTHROPIC_BASE_URL=http:/m);
      expect(filesHolding(e.world.stateDir, DOPPLER_VALUE)).toEqual([]);
    } finally {
      await m.call("kill_session", { session_id: sid });
    }
  });

  it("tmux: the count survives the server's restart", async () => {
    if (backend !== "tmux") return;
    const before = await violations();
    expect(before).toBeGreaterThanOrEqual(2);
    await m.close();
    m = await e.connect();
    expect(await violations()).toBe(before);
  });
});

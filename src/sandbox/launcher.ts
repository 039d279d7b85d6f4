#!/usr/bin/env node
/**
 * A sandboxed session's launcher: what the pane (tmux), the pty or the SDK runs in place of `claude`.
 *   node launcher.js SPEC
 * It reads the 0600 spec the server wrote in the session's own directory (sandbox/spec.ts) and deletes it, rebuilds
 * the session's own Claude configuration folder, starts the sandbox runtime's proxies in this process, runs Claude
 * Code under bubblewrap as its child (stdio inherited), passes on HUP/INT/TERM/QUIT, and exits with its status. So a
 * session's network and its allowlist live as long as its pane, whatever becomes of the server that started it.
 *
 * Environment: its own is the session's (the hand-off file's, or `doppler run`'s); the child gets it less DOPPLER_*
 * and the server's own CLAUDE_SESSIONS_* (the session's id and team-member variables stay), with CLAUDE_CONFIG_DIR
 * and the temp folder pointing at the session's own. A launcher that cannot build the sandbox says why on stderr
 * and exits 125: it never runs Claude Code unsandboxed.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { enableCompileCache } from "node:module";
import { dirname, join } from "node:path";
import { getCACertificates, setDefaultCACertificates } from "node:tls";
import { fileURLToPath } from "node:url";
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";
import { requestGuard, type MaskedSecret } from "./guard.js";
import { planMasks, type MaskPlan } from "./mask.js";
import { applySeccompPath, MEMBER_PORT, memberRelay, RELAY_SCRIPT, RELAY_SOCKET } from "./member-relay.js";
import { approveKeys, prepareConfig, sandboxEnv } from "./prepare.js";
import { violationReporter, type ViolationLine } from "./report.js";
import { decodeSpec, runtimeConfig, type SandboxSpec } from "./spec.js";

/** The launcher's exit status when it could not build the sandbox (Claude Code never ran). */
const FAILED = 125;

function fail(why: string): never {
  process.stderr.write(`claude-sessions sandbox: ${why}; Claude Code was not started.\n`);
  process.exit(FAILED);
}

/** Single quotes for /bin/sh: the runtime runs the wrapped command through a shell. */
function shq(a: string): string {
  return `'${a.replace(/'/g, `'\\''`)}'`;
}

/**
 * The runtime, loaded while the spec is read and the config folder made: its import is most of the launcher's own
 * start (180–280 ms under load). V8's compile cache for it lives in the state directory (`<state>/cache/compile`,
 * 0700: the server's user's alone, hidden from every sandbox), so later launches skip parsing and compiling it.
 */
type Runtime = typeof import("@anthropic-ai/sandbox-runtime");

function loadRuntime(specPath: string): Promise<Runtime> {
  try {
    const dir = join(dirname(dirname(specPath)), "cache", "compile");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    enableCompileCache(dir);
  } catch {
    // No cache: the import compiles from source, as without it.
  }
  return import("@anthropic-ai/sandbox-runtime");
}

async function main(): Promise<void> {
  // launcher.js SPEC [-- ARGV…]: ARGV (the SDK's command and args, headless) in place of the spec's.
  const [specPath, sep, ...rest] = process.argv.slice(2);
  if (!specPath) fail("no spec file given");
  if (sep !== undefined && sep !== "--") fail("usage: launcher.js SPEC [-- ARGV…]");
  const runtime = loadRuntime(specPath);
  // A failed load is reported where it is awaited (below), not as an unhandled rejection first.
  runtime.catch(() => undefined);
  let spec: SandboxSpec;
  try {
    spec = decodeSpec(readFileSync(specPath, "utf8"));
    unlinkSync(specPath);
  } catch (e) {
    fail(`the spec ${specPath} is unreadable (${(e as Error).message})`);
  }
  const argv = rest.length ? rest : spec.argv;
  if (!argv.length) fail("nothing to run (no argv in the spec or after --)");
  try {
    prepareConfig(spec);
  } catch (e) {
    fail(`could not prepare the session's config folder (${(e as Error).message})`);
  }
  let env = sandboxEnv(process.env, spec);
  const masks = spec.secrets ? planMasks(env, spec.secrets, spec.allowHosts) : undefined;
  if (masks) {
    env = masks.env;
    try {
      approveKeys(spec, masks.keys);
      trustUpstream(spec.secrets?.caFile);
    } catch (e) {
      fail(`could not set up the secrets' masks (${(e as Error).message})`);
    }
  }
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  const report = spec.events ? violationReporter(spec.events) : (_: ViolationLine) => Promise.resolve();
  const secrets: MaskedSecret[] = [...(masks?.unlisted ?? [])];
  // The listed secrets' values are in this process's environment only while the runtime wraps the command (it reads
  // them there): the proxies' socat bridges it starts before, and bubblewrap's shell after, never inherit them.
  const held: Record<string, string> = {};
  for (const l of masks?.listed ?? []) {
    const v = process.env[l.name];
    if (v !== undefined) held[l.name] = v;
    delete process.env[l.name];
  }
  const config = masked(runtimeConfig(spec), spec, masks, secrets, report);
  // A team session: its member server reaches the server through the launcher's one relay socket (member-relay.ts).
  const serverSocket = env.CLAUDE_SESSIONS_MEMBER_SOCKET;
  if (serverSocket) {
    // Only a server socket of this session's state directory: never another socket a variable might name.
    const sockets = join(dirname(spec.sessionDir), "sockets");
    if (dirname(serverSocket) !== sockets || !/^\d+\.sock$/.test(serverSocket.slice(sockets.length + 1)))
      fail(`the member socket ${JSON.stringify(serverSocket)} is not a server socket of ${sockets}`);
    const relay = join(spec.sessionDir, RELAY_SOCKET);
    // socat's address syntax: a path with these characters would be read as more than a path.
    if (/[:,!"'\\\s]/.test(relay))
      fail(
        `the session's folder ${JSON.stringify(spec.sessionDir)} cannot hold the member relay (a ':', ',', quote or space in its path)`,
      );
    try {
      await memberRelay(relay, serverSocket);
    } catch (e) {
      fail(`the member relay could not listen on ${relay} (${(e as Error).message})`);
    }
    Object.assign(process.env, {
      CLAUDE_SESSIONS_MEMBER_SOCKET: `tcp:${MEMBER_PORT}`,
      CLAUDE_SESSIONS_RELAY_PORT: String(MEMBER_PORT),
      CLAUDE_SESSIONS_RELAY_SOCKET: relay,
      CLAUDE_SESSIONS_RELAY_SOCAT: spec.tools.socat,
      CLAUDE_SESSIONS_SECCOMP: applySeccompPath(fileURLToPath(import.meta.resolve("@anthropic-ai/sandbox-runtime"))),
    });
    teamConfig(config, relay);
  }
  let wrapped: string;
  let SandboxManager: Awaited<typeof runtime>["SandboxManager"];
  try {
    ({ SandboxManager } = await runtime);
    await SandboxManager.initialize(config);
    // Inside, the proxies are the only way out: loopback and private ranges go through them too (the API may be a
    // local gateway, allowed as its IP literal and port), never "direct" into the sandbox's empty network.
    const cmd = ["env", "NO_PROXY=", "no_proxy=", ...argv].map(shq).join(" ");
    Object.assign(process.env, held);
    try {
      wrapped = await SandboxManager.wrapWithSandbox(cmd);
    } finally {
      for (const k of Object.keys(held)) delete process.env[k];
    }
    // The runtime minted its sentinels while wrapping: the guard looks for them too (registering again returns them).
    const registry = SandboxManager.getSentinelRegistry();
    for (const l of masks?.listed ?? []) {
      const r = masks!.runtime.find((x) => x.name === l.name)!;
      const real = held[l.name];
      if (real) secrets.push({ name: l.name, sentinel: registry.register(l.name, real, r.injectHosts), hosts: l.hosts });
    }
    watchViolations(SandboxManager, report);
  } catch (e) {
    fail(`the sandbox could not be made (${(e as Error).message})`);
  }
  const child = spawn(wrapped, { shell: true, stdio: "inherit", cwd: spec.cwd });
  const pass = (sig: NodeJS.Signals) => () => {
    child.kill(sig);
  };
  for (const sig of ["SIGHUP", "SIGINT", "SIGTERM", "SIGQUIT"] as const) process.on(sig, pass(sig));
  child.on("error", (e) => fail(`could not run the sandbox (${e.message})`));
  child.on("exit", (code, signal) => {
    try {
      SandboxManager.cleanupAfterCommand();
    } catch {
      // Mount points the runtime made for absent paths: best effort.
    }
    process.exit(code ?? (signal ? 128 + (SIGNALS[signal] ?? 15) : 1));
  });
}

/** The runtime runs the relay script in place of apply-seccomp; the relay socket is the one path of the session's folder it adds. */
function teamConfig(config: SandboxRuntimeConfig, relay: string): void {
  config.seccomp = { applyPath: RELAY_SCRIPT };
  config.filesystem.allowRead = [...(config.filesystem.allowRead ?? []), relay];
}

/**
 * Upstream TLS (the runtime re-originates every terminated HTTPS request): verified against Node's roots (and the
 * server's NODE_EXTRA_CA_CERTS); with the operator's CA file (CLAUDE_SESSIONS_SANDBOX_CA_FILE, also in the sandbox's
 * trust bundle), against the system's roots and that file too. Only then: reading the system's store costs a
 * launch some 40-150 ms.
 */
function trustUpstream(caFile: string | undefined): void {
  if (!caFile) return;
  const extra = readFileSync(caFile, "utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (!extra.length) throw new Error(`${caFile} holds no PEM certificate`);
  setDefaultCACertificates([...new Set([...getCACertificates("default"), ...getCACertificates("system"), ...extra])]);
}

/** The spec's runtime configuration with the secrets' masks, TLS termination and the request guard. */
function masked(
  base: SandboxRuntimeConfig,
  spec: SandboxSpec,
  m: MaskPlan | undefined,
  secrets: MaskedSecret[],
  report: (v: ViolationLine) => Promise<void>,
): SandboxRuntimeConfig {
  const s = spec.secrets;
  if (!s || !m) return base;
  const guard = requestGuard({ secrets, keys: m.keys, api: s.api }, (v) => {
    void report({
      violation: "secret",
      message: `${v.name} ${v.action === "refused" ? "refused" : "sent as its sentinel"} to ${v.target} (${v.why})`,
    });
  });
  // Terminated TLS is where the runtime substitutes and the guard sees HTTPS requests: on when anything needs it.
  const terminate = m.runtime.length > 0 || (m.keys.length > 0 && !s.api.plaintext) || s.caFile !== undefined;
  return {
    ...base,
    network: {
      ...base.network,
      filterRequest: guard,
      ...(s.api.plaintext ? { allowPlaintextHeaderSet: true } : {}),
      ...(terminate ? { tlsTerminate: { extraCaCertPaths: s.caFile ? [s.caFile] : [] } } : {}),
    },
    ...(m.runtime.length ? { credentials: { envVars: m.runtime } } : {}),
  };
}

/** Every refusal the runtime records (a host not on the allowlist, a refused tunnel) becomes a cs:sandbox_violation. */
function watchViolations(manager: Runtime["SandboxManager"], report: (v: ViolationLine) => Promise<void>): void {
  const store = manager.getSandboxViolationStore();
  let seen = store.getTotalCount();
  store.subscribe((all) => {
    const total = store.getTotalCount();
    const n = Math.min(total - seen, all.length);
    seen = total;
    if (n <= 0) return;
    const fresh = all.slice(-n);
    for (const v of fresh) void report({ violation: "network", message: v.line });
  });
}

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

void main().catch((e: unknown) => fail(String(e)));

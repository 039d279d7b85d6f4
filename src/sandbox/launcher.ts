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
import { fileURLToPath } from "node:url";
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";
import { applySeccompPath, MEMBER_PORT, memberRelay, RELAY_SCRIPT, RELAY_SOCKET } from "./member-relay.js";
import { prepareConfig, sandboxEnv } from "./prepare.js";
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
function loadRuntime(specPath: string): Promise<typeof import("@anthropic-ai/sandbox-runtime")> {
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
  const env = sandboxEnv(process.env, spec);
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  const config = runtimeConfig(spec);
  // A team session: its member server reaches the server through the launcher's one relay socket (member-relay.ts).
  const serverSocket = env.CLAUDE_SESSIONS_MEMBER_SOCKET;
  if (serverSocket) {
    // Only a server socket of this session's state directory: never another socket a variable might name.
    const sockets = join(dirname(spec.sessionDir), "sockets");
    if (dirname(serverSocket) !== sockets || !/^\d+\.sock$/.test(serverSocket.slice(sockets.length + 1))) fail(`the member socket ${JSON.stringify(serverSocket)} is not a server socket of ${sockets}`);
    const relay = join(spec.sessionDir, RELAY_SOCKET);
    // socat's address syntax: a path with these characters would be read as more than a path.
    if (/[:,!"'\\\s]/.test(relay)) fail(`the session's folder ${JSON.stringify(spec.sessionDir)} cannot hold the member relay (a ':', ',', quote or space in its path)`);
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
    wrapped = await SandboxManager.wrapWithSandbox(cmd);
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

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

void main().catch((e: unknown) => fail(String(e)));

/**
 * Whether a start runs in the sandbox (issue 32), and the launcher's spec for one that does. The operator's
 * CLAUDE_SESSIONS_SANDBOX decides the default and whether a caller may opt out; a caller may ask for one and narrow
 * the operator's host list, never widen it. A sandbox that cannot be made is SANDBOX_UNAVAILABLE (what is missing
 * named) at the start: a session is never started unsandboxed in its place.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DECISIONS_DIR, promptMarkPath } from "../../claude/hooks.js";
import type { Config } from "../../config.js";
import { SessionError } from "../../core/errors.js";
import { sandboxDeps } from "../../sandbox/deps.js";
import { apiHost, covers, formatHost, parseHost, parseHosts, widening, type HostPattern } from "../../sandbox/hosts.js";
import { loadSecretHosts, type SecretRule, type SecretsSpec } from "../../sandbox/secrets.js";
import { toolPaths } from "../../util/proc/tools.js";
import { credentialPaths, projectFolder, SPEC_FILE, type SandboxSpec } from "../../sandbox/spec.js";
import type { SandboxLaunch } from "../../runners/runner.js";

/** What a record keeps of its sandbox (resume, wake and forks run the same one). */
export interface SandboxChoice {
  allow_hosts?: string[] | undefined;
}

export type SandboxAsk = boolean | { allow_hosts?: string[] | undefined } | undefined;

/** The launcher's compiled module, beside this one in dist/. */
export const LAUNCHER_JS = fileURLToPath(new URL("../../sandbox/launcher.js", import.meta.url));

function operatorHosts(cfg: Config) {
  try {
    return parseHosts(cfg.sandboxHosts, "CLAUDE_SESSIONS_SANDBOX_HOSTS");
  } catch (e) {
    throw new SessionError("SANDBOX_UNAVAILABLE", `the operator's host list is not valid: ${(e as Error).message}.`, {
      suggestion: "The operator fixes CLAUDE_SESSIONS_SANDBOX_HOSTS (a comma list of host, host:port, *.domain or IP literals).",
    });
  }
}

/**
 * The sandbox a call asks for with the operator's default applied: part of the warm pool's key, so a sandboxed start
 * never takes an unsandboxed spare (nor the other way round), whatever the server that started the spare was told.
 */
export function sandboxKey(cfg: Config, ask: SandboxAsk): boolean | { allow_hosts?: string[] | undefined } {
  return ask === undefined ? cfg.sandbox !== "off" : ask;
}

/**
 * What keeps a start from running sandboxed (undefined: nothing): a runner without the launcher. A team session runs
 * sandboxed: its member server reaches the server through its launcher's relay (sandbox/member-relay.ts).
 */
export function sandboxBlocker(runner: { kind: string; caps: { sandbox: boolean } }): string | undefined {
  if (!runner.caps.sandbox) return `a ${runner.kind} session`;
  return undefined;
}

/** The sandbox a start gets, or undefined for none; throws when it cannot be what was asked. */
export function sandboxFor(cfg: Config, ask: SandboxAsk, unsupported?: string): SandboxChoice | undefined {
  const wanted = ask === undefined ? cfg.sandbox !== "off" : ask !== false;
  if (!wanted) {
    if (cfg.sandbox === "required") {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "sandbox: false is refused: this server runs every session in the sandbox (CLAUDE_SESSIONS_SANDBOX=required).",
        { suggestion: "Leave sandbox out (or pass true / {allow_hosts})." },
      );
    }
    return undefined;
  }
  if (unsupported)
    throw new SessionError("SANDBOX_UNAVAILABLE", `${unsupported} cannot run in the sandbox yet.`, {
      suggestion: "Pick a backend that can (tmux, pty), or pass sandbox: false where the operator allows it.",
    });
  const operator = operatorHosts(cfg);
  const choice: SandboxChoice = {};
  if (typeof ask === "object" && ask.allow_hosts) {
    let caller;
    try {
      caller = parseHosts(ask.allow_hosts, "sandbox.allow_hosts");
    } catch (e) {
      throw new SessionError("INVALID_ARGUMENT", `${(e as Error).message}.`, {
        suggestion: "Each entry is host, host:port, *.domain or an IP literal.",
      });
    }
    const wider = widening(operator, caller);
    if (wider.length) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `sandbox.allow_hosts may only narrow the operator's list; not in it: ${wider.map(formatHost).join(", ")}.`,
        {
          suggestion: `Pick from CLAUDE_SESSIONS_SANDBOX_HOSTS (${cfg.sandboxHosts.join(", ") || "empty: only the API's own host"}).`,
        },
      );
    }
    choice.allow_hosts = caller.map(formatHost);
  }
  secretSetup(cfg, operator);
  const deps = sandboxDeps();
  if (!deps.ok) throw new SessionError("SANDBOX_UNAVAILABLE", `the sandbox cannot be made here: ${deps.missing.join("; ")}.`);
  return choice;
}

/**
 * The API's base URL is plain HTTP to a loopback address (a local gateway or mock), or to any host when the operator
 * says so (CLAUDE_SESSIONS_SANDBOX_PLAINTEXT_API): the key is put back there without TLS.
 */
function plaintextApi(cfg: Pick<Config, "sandboxPlaintextApi">, baseUrl: string | undefined, api: HostPattern): boolean {
  if (!baseUrl?.startsWith("http:")) return false;
  const h = api.host.replace(/^\[|\]$/g, "");
  return /^127\./.test(h) || h === "::1" || cfg.sandboxPlaintextApi;
}

/**
 * The operator's secret hosts and CA file, checked at every sandboxed start (the file may change between them): a
 * file that is missing, not ours, not JSON or names a host the operator's allowlist does not cover, a CA file without
 * a certificate, an API on plain HTTP that is not loopback — SANDBOX_UNAVAILABLE, never a session without its masks.
 */
export function secretSetup(
  cfg: Config,
  operator: HostPattern[] = operatorHosts(cfg),
): { rules: SecretRule[]; caFile?: string | undefined } {
  const unavailable = (why: string, suggestion: string) => new SessionError("SANDBOX_UNAVAILABLE", why, { suggestion });
  let rules: SecretRule[] = [];
  if (cfg.secretHostsFile) {
    try {
      rules = loadSecretHosts(cfg.secretHostsFile);
    } catch (e) {
      throw unavailable(
        `the secret host list cannot be used: ${(e as Error).message}.`,
        'The operator fixes the file CLAUDE_SESSIONS_SECRET_HOSTS names (JSON {"NAME": ["host", "host:port", "*.domain"], "PREFIX_*": [...]}, mode 600).',
      );
    }
    const api = apiHost(process.env.ANTHROPIC_BASE_URL);
    const all = [api, ...operator];
    const out: string[] = [];
    for (const r of rules)
      for (const h of r.hosts) {
        const p = parseHost(h) as HostPattern;
        if (!all.some((o) => covers(o, p) || covers({ host: o.host }, p))) out.push(`${r.pattern}: ${h}`);
      }
    if (out.length)
      throw unavailable(
        `the secret host list names hosts a sandboxed session may not reach: ${out.join(", ")}.`,
        "Add them to CLAUDE_SESSIONS_SANDBOX_HOSTS, or take them out of the secret host list.",
      );
  }
  if (cfg.sandboxCaFile) {
    let text = "";
    try {
      text = readFileSync(cfg.sandboxCaFile, "utf8");
    } catch (e) {
      throw unavailable(
        `CLAUDE_SESSIONS_SANDBOX_CA_FILE cannot be read (${(e as Error).message}).`,
        "The operator points it at a PEM file of CA certificates.",
      );
    }
    if (!text.includes("-----BEGIN CERTIFICATE-----"))
      throw unavailable(
        `CLAUDE_SESSIONS_SANDBOX_CA_FILE (${cfg.sandboxCaFile}) holds no PEM certificate.`,
        "The operator points it at a PEM file of CA certificates.",
      );
  }
  const base = process.env.ANTHROPIC_BASE_URL;
  if (
    base?.startsWith("http:") &&
    !plaintextApi(cfg, base, apiHost(base)) &&
    (process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN || process.env.CLAUDE_CODE_OAUTH_TOKEN)
  ) {
    throw unavailable(
      "ANTHROPIC_BASE_URL is plain HTTP to a host that is not loopback: a sandboxed session's API key would cross the network in cleartext.",
      "Use https, or a gateway on 127.0.0.1; or the operator sets CLAUDE_SESSIONS_SANDBOX_PLAINTEXT_API=1 to accept it.",
    );
  }
  return { rules, ...(cfg.sandboxCaFile ? { caFile: cfg.sandboxCaFile } : {}) };
}

/** The launch's sandbox: the launcher, its spec's path and the spec (less Claude's argv, which the runner adds). */
export function sandboxLaunch(
  cfg: Config,
  choice: SandboxChoice,
  o: { dir: string; cwd: string; eventsPath: string; addDirs: readonly string[]; envNames?: readonly string[] },
): SandboxLaunch {
  const hosts = choice.allow_hosts ?? operatorHosts(cfg).map(formatHost);
  const apiP = apiHost(process.env.ANTHROPIC_BASE_URL);
  const api = formatHost(apiP);
  const setup = secretSetup(cfg);
  const secrets: SecretsSpec = {
    envNames: [...(o.envNames ?? [])],
    rules: setup.rules,
    api: { host: apiP.host, port: apiP.port ?? 443, plaintext: plaintextApi(cfg, process.env.ANTHROPIC_BASE_URL, apiP) },
    ...(setup.caFile ? { caFile: setup.caFile } : {}),
  };
  const t = toolPaths();
  const home = process.env.HOME || homedir();
  const realConfigDir = cfg.claudeConfigDir;
  const realConfigFile = join(process.env.CLAUDE_CONFIG_DIR || home, ".claude.json");
  const login = !process.env.ANTHROPIC_API_KEY && !process.env.ANTHROPIC_AUTH_TOKEN && !process.env.CLAUDE_CODE_OAUTH_TOKEN;
  const tools = sandboxDeps().tools;
  if (!tools)
    throw new SessionError("SANDBOX_UNAVAILABLE", `the sandbox cannot be made here: ${sandboxDeps().missing.join("; ")}.`);
  const spec: Omit<SandboxSpec, "argv"> = {
    v: 1,
    tools,
    cwd: o.cwd,
    sessionDir: o.dir,
    realConfigDir,
    realConfigFile,
    copyCredentials: login,
    secrets,
    events: { path: o.eventsPath, flock: t.flock, paste: t.paste },
    allowHosts: [...new Set([api, ...hosts])],
    // The hooks append to its events log (and name the last prompt in it); the permission hook takes its decision files.
    allowWrite: [
      o.eventsPath,
      `${o.eventsPath}.lock`,
      promptMarkPath(o.eventsPath),
      join(o.dir, DECISIONS_DIR),
      ...o.addDirs.map((d) => resolve(d)),
    ],
    denyRead: [
      ...credentialPaths(home),
      ...(login ? [] : [join(realConfigDir, ".credentials.json")]),
      cfg.stateDir,
      join(realConfigDir, "projects"),
    ],
    // The server's scripts (the permission hook), its cwd (a worktree lives in the state dir), its transcripts. The
    // runner adds the files of the session's folder Claude reads (its settings, the member server's configuration).
    allowRead: [join(cfg.stateDir, "bin"), o.cwd, projectFolder(realConfigDir, o.cwd), ...(setup.caFile ? [setup.caFile] : [])],
  };
  return { node: process.execPath, launcher: LAUNCHER_JS, specPath: join(o.dir, SPEC_FILE), spec };
}

/**
 * Variables a caller's `env` may not set for a sandboxed session, whatever CLAUDE_SESSIONS_ALLOW_ENV says: they reach
 * the launcher, which runs outside the sandbox (Node's options, the dynamic linker's, the PATH its shell searches, the
 * HOME the runtime's default write paths hang off, the server's own variables: the member socket it would relay to).
 */
const OUTSIDE = /^(PATH|HOME|NODE_OPTIONS|NODE_PATH|NODE_EXTRA_CA_CERTS|LD_.*|DYLD_.*|CLAUDE_SESSIONS_.*)$/;

export function checkSandboxEnv(env: Record<string, string>): void {
  const bad = Object.keys(env).filter((k) => OUTSIDE.test(k));
  if (bad.length) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `env ${bad.join(", ")} cannot be set for a sandboxed session: the launcher that builds the sandbox runs outside ` +
        `it and would obey ${bad.length > 1 ? "them" : "it"}.`,
      {
        suggestion: "Leave it out, or start the session with sandbox: false where the operator allows it.",
      },
    );
  }
}

/**
 * Secrets that never enter the sandbox (issue 32): which of a session's variables are masked, where each one's real
 * value may go, and the operator's list of those hosts (CLAUDE_SESSIONS_SECRET_HOSTS, a JSON file
 * `{"NAME": ["host", "host:port", "*.domain"], "PREFIX_*": [...]}`). Masked are the per-session `env` values, the
 * variables Doppler adds (a session under `doppler run`), every variable the file names, and the API key
 * (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN), whose host is the API's own. Nothing here is a
 * secret: names and hosts only; the values reach the launcher through its environment.
 */
import { readFileSync, statSync } from "node:fs";
import { formatHost, parseHost } from "./hosts.js";

/** The variables that carry the API key or token: masked always, injected only at the API's own host. */
export const API_KEY_VARS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"] as const;

/** A name (`NAME`) or a prefix (`PREFIX_*`) of the secret host file, with the hosts its value may be sent to. */
export interface SecretRule {
  pattern: string;
  hosts: string[];
}

/** What a launcher needs to mask a session's secrets (part of the sandbox spec). */
export interface SecretsSpec {
  /** The per-session `env` names (a caller's values: always masked). */
  envNames: string[];
  /** Under `doppler run`: the names the server itself passed; any other variable the launcher holds is Doppler's. */
  dopplerBase?: string[] | undefined;
  rules: SecretRule[];
  /** The API's host:port (from ANTHROPIC_BASE_URL, else api.anthropic.com:443) and whether it is plain HTTP. */
  api: { host: string; port: number; plaintext: boolean };
  /** CLAUDE_SESSIONS_SANDBOX_CA_FILE: PEM roots for upstream TLS, also in the sandbox's trust bundle. */
  caFile?: string | undefined;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PREFIX = /^[A-Za-z_][A-Za-z0-9_]*\*$/;

/** The file's rules; throws an Error naming every bad entry. */
export function parseSecretHosts(text: string, what = "CLAUDE_SESSIONS_SECRET_HOSTS"): SecretRule[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not JSON (${(e as Error).message})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new Error(`${what} must be a JSON object {"NAME": ["host", …], "PREFIX_*": […]}`);
  const bad: string[] = [];
  const rules: SecretRule[] = [];
  for (const [k, hosts] of Object.entries(v as Record<string, unknown>)) {
    if (!NAME.test(k) && !PREFIX.test(k)) bad.push(`${JSON.stringify(k)} is not a variable name or PREFIX_*`);
    if (!Array.isArray(hosts) || hosts.length === 0 || !hosts.every((h) => typeof h === "string")) {
      bad.push(`${JSON.stringify(k)}: a non-empty list of hosts is expected`);
      continue;
    }
    const ok: string[] = [];
    for (const h of hosts as string[]) {
      const p = parseHost(h);
      if (typeof p === "string") bad.push(`${JSON.stringify(k)}: ${p}`);
      else ok.push(formatHost(p));
    }
    rules.push({ pattern: k, hosts: ok });
  }
  if (bad.length) throw new Error(`${what}: ${bad.join("; ")}`);
  return rules;
}

/** Reads and checks the operator's file: it must belong to this user and not be writable by others (as nodes.json). */
export function loadSecretHosts(path: string): SecretRule[] {
  const st = statSync(path);
  const me = process.getuid?.();
  if ((me !== undefined && st.uid !== me && st.uid !== 0) || st.mode & 0o022) {
    throw new Error(
      `${path} cannot be trusted: it must belong to this server's user and not be writable by group or others (mode ${(st.mode & 0o777).toString(8)}, ` +
        `uid ${st.uid}). Fix: chmod 600 ${JSON.stringify(path)}`,
    );
  }
  return parseSecretHosts(readFileSync(path, "utf8"), `CLAUDE_SESSIONS_SECRET_HOSTS (${path})`);
}

/** The hosts a variable's value may be sent to: its own entry, else the longest PREFIX_* that matches it. */
export function hostsFor(name: string, rules: readonly SecretRule[]): string[] | undefined {
  const exact = rules.find((r) => r.pattern === name);
  if (exact) return exact.hosts;
  let best: SecretRule | undefined;
  for (const r of rules) {
    if (!r.pattern.endsWith("*")) continue;
    const pre = r.pattern.slice(0, -1);
    if (name.startsWith(pre) && (!best || pre.length > best.pattern.length - 1)) best = r;
  }
  return best?.hosts;
}

/** What the terminal and the runtime set, never a secret (a Doppler session's launcher holds them too). */
const TERMINAL = new Set([
  "TERM",
  "TERM_PROGRAM",
  "TERM_PROGRAM_VERSION",
  "COLORTERM",
  "TMUX",
  "TMUX_PANE",
  "SHLVL",
  "PWD",
  "OLDPWD",
  "_",
  "COLUMNS",
  "LINES",
]);
/** The launcher's own settings of the child, and the session's id: never masked. */
const NEVER = /^(CLAUDE_CONFIG_DIR|CLAUDE_CODE_TMPDIR|IS_SANDBOX|CLAUDE_SESSION_ID|CLAUDE_SESSIONS_.*|PATH|HOME)$/;

/** The names of `env` (the child's, before masking) whose values stay outside the sandbox; the API key's apart. */
export function secretNames(env: Record<string, string>, s: SecretsSpec): string[] {
  const base = s.dopplerBase ? new Set(s.dopplerBase) : undefined;
  const envNames = new Set(s.envNames);
  return Object.keys(env).filter((k) => {
    if (NEVER.test(k) || (API_KEY_VARS as readonly string[]).includes(k) || env[k] === "") return false;
    if (envNames.has(k) || hostsFor(k, s.rules)) return true;
    return base !== undefined && !base.has(k) && !TERMINAL.has(k);
  });
}

/** Whether a host pattern (`host`, `host:port`, `*.domain`) covers a request's destination. */
export function hostMatches(pattern: string, host: string, port: number): boolean {
  const p = parseHost(pattern);
  if (typeof p === "string") return false;
  if (p.port !== undefined && p.port !== port) return false;
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  const ph = p.host.replace(/^\[|\]$/g, "");
  if (ph.startsWith("*.")) return h.endsWith(ph.slice(1));
  return h === ph;
}

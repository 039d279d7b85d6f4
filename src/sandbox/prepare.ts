/**
 * What a sandboxed session's launcher prepares outside the sandbox: the child's environment and the session's own
 * Claude configuration folder (sandbox/launcher.ts runs these; tests call them directly).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_DIR, projectFolder, TMP_DIR, type SandboxSpec } from "./spec.js";

/** Server variables a session keeps (its id, the member server's). */
const KEEP = new Set([
  "CLAUDE_SESSIONS_ID",
  "CLAUDE_SESSIONS_MEMBER_SECRET",
  "CLAUDE_SESSIONS_MEMBER_SOCKET",
  "CLAUDE_SESSIONS_TEAM_LEAD",
]);
const DROP = /^(DOPPLER_|CLAUDE_SESSIONS_)/;

/** The child's environment: the launcher's, less the server's and Doppler's own variables, with the session's folders. */
export function sandboxEnv(env: NodeJS.ProcessEnv, s: SandboxSpec): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && (!DROP.test(k) || KEEP.has(k))) out[k] = v;
  out.CLAUDE_CONFIG_DIR = join(s.sessionDir, CONFIG_DIR);
  out.CLAUDE_CODE_TMPDIR = join(s.sessionDir, TMP_DIR);
  // It is one: Claude Code takes bypassPermissions as root only with this (CLAUDE_SESSIONS_ALLOW_BYPASS=sandboxed).
  out.IS_SANDBOX = "1";
  return out;
}

/**
 * The session's own configuration folder, made fresh at every launch: a copy of the user's main config (trust,
 * onboarding, approved key) and settings, `projects` a link to the user's (so transcripts land where the server
 * and other sessions find them). A session can write this folder; what it writes there never outlives its launch.
 */
export function prepareConfig(s: SandboxSpec): void {
  const dir = join(s.sessionDir, CONFIG_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  mkdirSync(join(s.sessionDir, TMP_DIR), { recursive: true, mode: 0o700 });
  mkdirSync(projectFolder(s.realConfigDir, s.cwd), { recursive: true, mode: 0o700 });
  // What it may write that is not there yet (the permission decisions folder): made now, outside.
  for (const w of s.allowWrite) if (!existsSync(w)) mkdirSync(w, { recursive: true, mode: 0o700 });
  if (existsSync(s.realConfigFile)) copyFileSync(s.realConfigFile, join(dir, ".claude.json"));
  for (const f of ["settings.json", ...(s.copyCredentials ? [".credentials.json"] : [])]) {
    const from = join(s.realConfigDir, f);
    if (existsSync(from)) copyFileSync(from, join(dir, f));
  }
  symlinkSync(join(s.realConfigDir, "projects"), join(dir, "projects"));
}

/**
 * Claude Code asks before it uses an API key whose last 20 characters are not in its config's
 * customApiKeyResponses.approved: the session's own config approves the sentinels it is given instead of the real
 * keys (whose last characters would otherwise be readable inside the sandbox).
 */
export function approveKeys(s: SandboxSpec, keys: ReadonlyArray<{ sentinel: string; real: string }>): void {
  if (!keys.length) return;
  const file = join(s.sessionDir, CONFIG_DIR, ".claude.json");
  let config: Record<string, unknown> = {};
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) config = v as Record<string, unknown>;
  } catch {
    // None yet (or not JSON): Claude Code starts from this one.
  }
  const responses = (
    typeof config.customApiKeyResponses === "object" && config.customApiKeyResponses !== null ? config.customApiKeyResponses : {}
  ) as Record<string, unknown>;
  const real = new Set(keys.map((k) => k.real.slice(-20)));
  const wasApproved = Array.isArray(responses.approved)
    ? (responses.approved as unknown[]).filter((x): x is string => typeof x === "string")
    : [];
  const approved = wasApproved.filter((x) => !real.has(x));
  const rejected = Array.isArray(responses.rejected)
    ? (responses.rejected as unknown[]).filter((x) => typeof x === "string" && !real.has(x))
    : [];
  // Approved inside as it was outside: a key the user never approved stays a question.
  for (const k of keys) if (wasApproved.includes(k.real.slice(-20))) approved.push(k.sentinel.slice(-20));
  config.customApiKeyResponses = { ...responses, approved, rejected };
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
}

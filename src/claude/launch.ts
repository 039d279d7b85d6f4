/**
 * Pure builders of the argv that starts Claude Code (optionally under `doppler run`), and of the
 * environment the child gets. Tests assert these exactly.
 */
import type { PermissionModeName } from "../core/modes.js";
import { ENV_NAME } from "../util/proc/env.js";

export interface ClaudeOptions {
  model?: string;
  permission_mode?: PermissionModeName;
  append_system_prompt?: string;
  add_dirs?: string[];
  allowed_tools?: string[];
  disallowed_tools?: string[];
}

/** `at`: only the conversation up to and including this transcript entry (headless only: the SDK's resumeSessionAt). */
export type LaunchMode =
  { kind: "new"; claudeSessionId: string } | { kind: "resume"; resumeId: string; fork?: { newId: string }; at?: string };

/**
 * Every option with a value is one `--flag=value` argument, so a value that starts with "-" can never be
 * read as another flag, whatever it holds.
 */
export function buildClaudeArgs(mode: LaunchMode, settingsPath: string, o: ClaudeOptions): string[] {
  const a: string[] = [];
  if (mode.kind === "new") a.push(`--session-id=${mode.claudeSessionId}`);
  else {
    a.push(`--resume=${mode.resumeId}`);
    if (mode.fork) a.push("--fork-session", `--session-id=${mode.fork.newId}`);
  }
  a.push(`--settings=${settingsPath}`);
  if (o.model) a.push(`--model=${o.model}`);
  if (o.permission_mode) a.push(`--permission-mode=${o.permission_mode}`);
  if (o.append_system_prompt) a.push(`--append-system-prompt=${o.append_system_prompt}`);
  for (const d of o.add_dirs ?? []) a.push(`--add-dir=${d}`);
  if (o.allowed_tools?.length) a.push(`--allowedTools=${o.allowed_tools.join(",")}`);
  if (o.disallowed_tools?.length) a.push(`--disallowedTools=${o.disallowed_tools.join(",")}`);
  return a;
}

export interface DopplerWrap {
  path: string;
  project?: string;
  config?: string;
}

/** `doppler run --forward-signals [-p P] [-c C] -- <argv>`: argv form, never --command. */
export function wrapWithDoppler(argv: string[], d: DopplerWrap): string[] {
  const a = [d.path, "run", "--forward-signals"];
  if (d.project) a.push("--project", d.project);
  if (d.config) a.push("--config", d.config);
  return [...a, "--", ...argv];
}

/** Variables that must not reach a nested Claude Code (it refuses to start inside another one). */
const DROP = new Set([
  "CLAUDECODE",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  "TMUX",
  "TMUX_PANE",
  "CLAUDE_SESSIONS_TMUX_SOCKET",
  "CLAUDE_SESSIONS_TOKEN",
]);

/** The server's own Doppler credentials: only a session run under `doppler run` gets them. */
const DOPPLER_OWN = /^DOPPLER_/;

/** Whether `argv` is one wrapWithDoppler built (`<doppler> run --forward-signals … -- <claude …>`). */
export function usesDoppler(argv: readonly string[]): boolean {
  return argv[1] === "run" && argv[2] === "--forward-signals" && argv.includes("--");
}

/**
 * The child's environment: the server's, less what breaks a nested start and the server's own secrets (its HTTP
 * token; DOPPLER_* unless the session runs under doppler), plus the session's own (`extra`, which may set any).
 */
export function childEnv(
  base: NodeJS.ProcessEnv,
  extra: Record<string, string>,
  o: { doppler?: boolean } = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || DROP.has(k) || !ENV_NAME.test(k) || (!o.doppler && DOPPLER_OWN.test(k))) continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) env[k] = v;
  return env;
}

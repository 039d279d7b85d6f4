/**
 * What the server decides for every launch instead of leaving it to the CLI: the permission mode (always passed
 * explicitly), the CLI's version (recorded, with a warning outside the tested range), the auto-updater (off).
 */
import { findClaude } from "../../claude/discover.js";
import { cliVersion, versionWarning } from "../../claude/versions.js";
import type { Config } from "../../config.js";
import { isPermissionMode, type PermissionModeName } from "../../core/modes.js";
import type { SessionRecord } from "../../store/schema.js";
import { containsStateWarning } from "./confine.js";

/** The mode a launch runs in: the one asked for (or recorded), else the server's default. */
export function effectiveMode(cfg: Config, asked: unknown): PermissionModeName {
  return isPermissionMode(asked) ? asked : cfg.defaultPermissionMode;
}

/** Options (a start's input or a record's stored options) with the effective permission mode filled in. */
export function withMode<T extends { permission_mode?: unknown }>(cfg: Config, o: T): T & { permission_mode: PermissionModeName } {
  return { ...o, permission_mode: effectiveMode(cfg, o.permission_mode) };
}

/** Variables every session's CLI gets from the server: the auto-updater off unless the operator allows it. */
export function policyEnv(cfg: Config): Record<string, string> {
  return cfg.allowAutoupdate ? {} : { DISABLE_AUTOUPDATER: "1" };
}

/** The CLI's version (cached per binary; undefined when it does not say). */
export const versionOf = (claudePath: string): Promise<string | undefined> => cliVersion(claudePath);

/**
 * A serving server reads the CLI's version once at start, in the background, so that its first start_session does not
 * wait for `claude --version` (a process of its own: 40 ms for the fake claude, more for the real one). The cache is
 * by the binary's identity: an update in place is read again at the next start.
 */
export function prefetchVersion(cfg: Config): void {
  const path = findClaude(cfg.claudePath).path;
  if (path) void versionOf(path);
}

/** Records the version of the binary a launch runs. */
export function setVersion(r: SessionRecord, v: string | undefined): void {
  if (v) r.claude_version = v;
  else delete r.claude_version;
}

/** The warnings of a start or resume result: a CLI outside the tested range, a cwd or add_dirs over the state directory. */
export function launchWarnings(r: SessionRecord, stateDir?: string): string[] | undefined {
  const addDirs = r.options.add_dirs ?? [];
  const w = [versionWarning(r.claude_version), stateDir ? containsStateWarning(stateDir, [r.cwd, ...addDirs]) : undefined].filter((x): x is string => x !== undefined);
  return w.length ? w : undefined;
}

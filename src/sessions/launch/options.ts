/**
 * A start's and a resume's options, in one place: the design's own argument names (flat doppler_project /
 * doppler_config, and a caller-chosen session_id that makes start_session idempotent: the same id with the same
 * options is the same session); the options that only some runners honour (their capabilities say which;
 * docs/configuration.md has the measured table): a runner refuses the others with UNSUPPORTED_OPTION naming the
 * backends that honour them, never silently ignored; Claude's own launch options (argv on a terminal, the SDK's
 * options headless), from a call or a record; and what the server decides for every launch instead of leaving it to
 * the CLI: the permission mode (always passed explicitly), the CLI's version (recorded, with a warning outside the
 * tested range), the auto-updater (off).
 */
import { createHash } from "node:crypto";
import { customAlphabet } from "nanoid";
import type { ResumeInput, StartInput } from "../../api/index.js";
import type { ClaudeOptions } from "../../claude/launch.js";
import { findClaude } from "../../claude/discover.js";
import { cliVersion, compareVersions, versionWarning } from "../../claude/versions.js";
import type { Config } from "../../config.js";
import { isPermissionMode, type PermissionModeName } from "../../core/modes.js";
import { SessionError } from "../../core/errors.js";
import {
  KEEPABLE_OPTIONS,
  RUNNER_OPTIONS,
  type KeepableOption,
  type LaunchOptions,
  type Runner,
  type RunnerOption,
} from "../../runners/runner.js";
import { canonicalJson } from "../../store/idempotency.js";
import { StoredOptionsSchema, type StoredOptions } from "../../store/options.js";
import type { SessionRecord } from "../../store/schema.js";
import { containsStateWarning } from "./confine.js";

/** A new session id: 10 of [0-9a-z]. */
export const newSessionId = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 10);

/** Names under the state directory that are not sessions. */
const RESERVED_IDS = new Set(["bin", "worktrees", "tmp", "lock"]);

interface DopplerForms {
  doppler?: { project?: string | undefined; config?: string | undefined } | undefined;
  doppler_project?: string | undefined;
  doppler_config?: string | undefined;
}

/** One Doppler choice from either form; both forms naming different values is INVALID_ARGUMENT. */
export function dopplerChoice(i: DopplerForms): { project?: string; config?: string } | undefined {
  if (!i.doppler && i.doppler_project === undefined && i.doppler_config === undefined) return undefined;
  const pick = (k: "project" | "config", flat: string | undefined) => {
    const nested = i.doppler?.[k];
    if (nested !== undefined && flat !== undefined && nested !== flat) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `doppler.${k} ${JSON.stringify(nested)} and doppler_${k} ${JSON.stringify(flat)} disagree; give one.`,
      );
    }
    return nested ?? flat;
  };
  const project = pick("project", i.doppler_project);
  const config = pick("config", i.doppler_config);
  return { ...(project !== undefined ? { project } : {}), ...(config !== undefined ? { config } : {}) };
}

/**
 * What makes two start calls "the same": every option except the first prompt, with env reduced to its names (no
 * value is hashed into the record). The call's idempotency_key is not an option.
 */
function startFields(input: StartInput): Record<string, unknown> {
  const {
    prompt: _p,
    env,
    session_id: _s,
    stream_output: _o,
    idempotency_key: _k,
    doppler: _d,
    doppler_project: _dp,
    doppler_config: _dc,
    ...others
  } = input;
  return { ...others, doppler: dopplerChoice(input) ?? null, env_names: Object.keys(env ?? {}).sort() };
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

export function startFingerprint(input: StartInput): string {
  return sha256(canonicalJson(startFields(input)));
}

/** Per option given, a short hash of its value: what a later start with the same session_id is compared with, by name. */
export function startFieldHashes(input: StartInput): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(startFields(input))) if (v !== undefined) out[k] = sha256(canonicalJson(v)).slice(0, 16);
  return out;
}

/** A caller-chosen id: not a name the state directory uses for itself. */
export function checkChosenId(id: string): void {
  if (RESERVED_IDS.has(id.toLowerCase()))
    throw new SessionError("INVALID_ARGUMENT", `session_id ${JSON.stringify(id)} is reserved; choose another.`);
}

/**
 * A start with the id of an existing session: the same session when the options match and it carries no prompt;
 * otherwise ALREADY_EXISTS naming what differs (the options by name where the record kept their hashes; a prompt,
 * which this start would not send).
 */
export function sameStart(existing: SessionRecord, input: StartInput): true {
  const differences: string[] = [];
  if (existing.options.start_fingerprint !== startFingerprint(input)) {
    const had = existing.options.start_fields;
    if (had) {
      const now = startFieldHashes(input);
      for (const k of [...new Set([...Object.keys(had), ...Object.keys(now)])].sort()) if (had[k] !== now[k]) differences.push(k);
    }
    if (!differences.length) differences.push("options");
  }
  if (input.prompt !== undefined) differences.push("prompt");
  if (!differences.length) return true;
  const what = differences.filter((k) => k !== "prompt");
  const why = [
    what.length ? `other ${what.join(", ")} than this call's` : "",
    differences.includes("prompt") ? "a prompt this call would not send (the session exists already)" : "",
  ]
    .filter(Boolean)
    .join(", and ");
  throw new SessionError("ALREADY_EXISTS", `session ${existing.session_id} already exists: ${why}.`, {
    suggestion:
      differences.includes("prompt") && !what.length
        ? "Give the prompt with send_message (or start_session without a prompt returns the existing session); a new session needs another session_id."
        : "Use another session_id, call start_session with the session's own options and no prompt, or resume_session to bring it back with new options.",
    details: { session_id: existing.session_id, differences },
  });
}

type Given = Partial<Pick<StartInput & ResumeInput, (typeof RUNNER_OPTIONS)[number] | "max_turns" | "max_budget_usd">>;

/** Refuses the options `runner` does not honour, naming the kinds of `all` that do. */
export function checkBackendOptions(runner: Runner, all: readonly Runner[], input: Given, doppler: boolean): void {
  const given = RUNNER_OPTIONS.filter(
    (k) => (k === "doppler" ? doppler : input[k] !== undefined) && !runner.caps.honours.includes(k),
  );
  if (!given.length) return;
  const by = all.filter((r) => given.every((k) => r.caps.honours.includes(k))).map((r) => r.kind);
  const where = by.length ? `the ${by.join(" and ")} backend${by.length > 1 ? "s" : ""} only` : "no backend of this server";
  throw new SessionError(
    "UNSUPPORTED_OPTION",
    `${given.join(", ")} ${given.length > 1 ? "are" : "is"} honoured by ${where} (this session would run on ${runner.kind}).`,
    {
      suggestion: by.length
        ? `Pass backend: ${by.map((k) => JSON.stringify(k)).join(" or ")}, or leave the option out.`
        : "Leave the option out.",
      details: { options: given, backend: runner.kind, honoured_by: by },
    },
  );
}

/** Whether `input` gives an option `runner` honours only from some CLI version on (then checkVersionOptions needs the version). */
export function needsVersion(runner: Runner, input: Given): boolean {
  return Object.keys(runner.caps.since ?? {}).some((k) => input[k as keyof Given] !== undefined);
}

/** Refuses an option the CLI `version` is too old for on `runner`, naming the backends that honour it on that version. */
export function checkVersionOptions(runner: Runner, all: readonly Runner[], version: string | undefined, input: Given): void {
  if (!version) return;
  const old = (r: Runner, k: RunnerOption) => {
    const v = r.caps.since?.[k];
    return v !== undefined && compareVersions(version, v) < 0;
  };
  const given = (Object.keys(runner.caps.since ?? {}) as RunnerOption[]).filter(
    (k) => input[k as keyof Given] !== undefined && old(runner, k),
  );
  if (!given.length) return;
  const by = all.filter((r) => r !== runner && given.every((k) => r.caps.honours.includes(k) && !old(r, k))).map((r) => r.kind);
  const need = given.map((k) => `${k} needs Claude Code ${runner.caps.since![k]} or later on ${runner.kind}`).join("; ");
  throw new SessionError("UNSUPPORTED_OPTION", `${need} (this CLI is ${version}).`, {
    suggestion: by.length
      ? `Pass backend: ${by.map((k) => JSON.stringify(k)).join(" or ")} (they honour it on ${version}), use a newer Claude ` +
        `Code (CLAUDE_PATH), or leave the option out.`
      : "Use a newer Claude Code (CLAUDE_PATH), or leave the option out.",
    details: { options: given, backend: runner.kind, version, honoured_by: by },
  });
}

/** What a session on `runner` keeps of its options for resume_session (mcp_servers never: they may hold secrets). */
export function storedHeadlessOptions(runner: Runner, input: Given): Pick<StoredOptions, KeepableOption> {
  return StoredOptionsSchema.pick(PICK).parse(
    Object.fromEntries(runner.caps.keeps.filter((k) => input[k] !== undefined).map((k) => [k, input[k]])),
  );
}

const PICK = Object.fromEntries(KEEPABLE_OPTIONS.map((k) => [k, true])) as { [K in KeepableOption]: true };

/** The record's options for a session now running on `runner`: what it does not keep is dropped on a take-over. */
export function optionsFor(runner: Runner, stored: StoredOptions, input: Given): StoredOptions {
  const out = { ...stored };
  for (const k of KEEPABLE_OPTIONS) if (!runner.caps.keeps.includes(k)) delete out[k];
  return { ...out, ...storedHeadlessOptions(runner, input) };
}

/** Options passed to this launch only (never stored). */
export function transientOptions(input: Given): Pick<LaunchOptions, "mcp_servers"> {
  return input.mcp_servers ? { mcp_servers: input.mcp_servers } : {};
}

/** The options of `o` that Claude takes (empty values left out). */
export function pickClaudeOptions(o: Pick<StoredOptions, keyof ClaudeOptions>): ClaudeOptions {
  const out: ClaudeOptions = {};
  if (o.model) out.model = o.model;
  if (o.permission_mode) out.permission_mode = o.permission_mode;
  if (o.append_system_prompt) out.append_system_prompt = o.append_system_prompt;
  if (o.add_dirs?.length) out.add_dirs = [...o.add_dirs];
  if (o.allowed_tools?.length) out.allowed_tools = [...o.allowed_tools];
  if (o.disallowed_tools?.length) out.disallowed_tools = [...o.disallowed_tools];
  return out;
}

/** The mode a launch runs in: the one asked for (or recorded), else the server's default. */
export function effectiveMode(cfg: Config, asked: unknown): PermissionModeName {
  return isPermissionMode(asked) ? asked : cfg.defaultPermissionMode;
}

/** Options (a start's input or a record's stored options) with the effective permission mode filled in. */
export function withMode<T extends { permission_mode?: unknown }>(
  cfg: Config,
  o: T,
): T & { permission_mode: PermissionModeName } {
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
  const w = [versionWarning(r.claude_version), stateDir ? containsStateWarning(stateDir, [r.cwd, ...addDirs]) : undefined].filter(
    (x): x is string => x !== undefined,
  );
  return w.length ? w : undefined;
}

/**
 * Options that only some runners honour (their capabilities say which; docs/configuration.md has the measured
 * table): a runner refuses the others with UNSUPPORTED_OPTION naming the backends that honour them. Never silently
 * ignored.
 */
import type { ResumeInput, StartInput } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import { compareVersions } from "../../claude/versions.js";
import { KEEPABLE_OPTIONS, RUNNER_OPTIONS, type KeepableOption, type LaunchOptions, type Runner, type RunnerOption } from "../../runners/runner.js";
import { StoredOptionsSchema, type StoredOptions } from "../../store/options.js";

type Given = Partial<Pick<StartInput & ResumeInput, (typeof RUNNER_OPTIONS)[number] | "max_turns" | "max_budget_usd">>;

/** Refuses the options `runner` does not honour, naming the kinds of `all` that do. */
export function checkBackendOptions(runner: Runner, all: readonly Runner[], input: Given, doppler: boolean): void {
  const given = RUNNER_OPTIONS.filter((k) => (k === "doppler" ? doppler : input[k] !== undefined) && !runner.caps.honours.includes(k));
  if (!given.length) return;
  const by = all.filter((r) => given.every((k) => r.caps.honours.includes(k))).map((r) => r.kind);
  const where = by.length ? `the ${by.join(" and ")} backend${by.length > 1 ? "s" : ""} only` : "no backend of this server";
  throw new SessionError("UNSUPPORTED_OPTION", `${given.join(", ")} ${given.length > 1 ? "are" : "is"} honoured by ${where} (this session would run on ${runner.kind}).`, {
    suggestion: by.length ? `Pass backend: ${by.map((k) => JSON.stringify(k)).join(" or ")}, or leave the option out.` : "Leave the option out.",
    details: { options: given, backend: runner.kind, honoured_by: by },
  });
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
  const given = (Object.keys(runner.caps.since ?? {}) as RunnerOption[]).filter((k) => input[k as keyof Given] !== undefined && old(runner, k));
  if (!given.length) return;
  const by = all.filter((r) => r !== runner && given.every((k) => r.caps.honours.includes(k) && !old(r, k))).map((r) => r.kind);
  const need = given.map((k) => `${k} needs Claude Code ${runner.caps.since![k]} or later on ${runner.kind}`).join("; ");
  throw new SessionError("UNSUPPORTED_OPTION", `${need} (this CLI is ${version}).`, {
    suggestion: by.length ? `Pass backend: ${by.map((k) => JSON.stringify(k)).join(" or ")} (they honour it on ${version}), use a newer Claude Code (CLAUDE_PATH), or leave the option out.` : "Use a newer Claude Code (CLAUDE_PATH), or leave the option out.",
    details: { options: given, backend: runner.kind, version, honoured_by: by },
  });
}

/** What a session on `runner` keeps of its options for resume_session (mcp_servers never: they may hold secrets). */
export function storedHeadlessOptions(runner: Runner, input: Given): Pick<StoredOptions, KeepableOption> {
  return StoredOptionsSchema.pick(PICK).parse(Object.fromEntries(runner.caps.keeps.filter((k) => input[k] !== undefined).map((k) => [k, input[k]])));
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

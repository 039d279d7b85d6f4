/**
 * Options that only some backends honour. Headless sessions (the CLI through the Agent SDK) take the SDK's
 * options; terminal sessions refuse them, and headless ones refuse what needs a terminal. Never silently ignored.
 */
import { HEADLESS_ONLY, type ResumeInput, type StartInput } from "../api/index.js";
import { SessionError } from "../core/errors.js";
import type { BackendKind } from "../core/events.js";

type Given = Partial<Pick<StartInput & ResumeInput, (typeof HEADLESS_ONLY)[number] | "doppler" | "max_turns" | "max_budget_usd">>;

/** Option names stored in a record's `options` for a headless session (mcp_servers never: they may hold secrets). */
const STORED = ["max_turns", "max_budget_usd", "system_prompt", "fallback_model", "strict_mcp_config", "setting_sources", "output_schema"] as const;

export function checkBackendOptions(kind: BackendKind, input: Given, doppler: boolean): void {
  if (kind !== "headless") {
    const given = HEADLESS_ONLY.filter((k) => input[k] !== undefined);
    if (given.length) {
      throw new SessionError("INVALID_ARGUMENT", `${given.join(", ")} ${given.length > 1 ? "are" : "is"} honoured by the headless backend only (this session would run on ${kind}).`, {
        suggestion: 'Pass backend: "headless", or leave the option out.',
      });
    }
    return;
  }
  if (doppler) {
    throw new SessionError("INVALID_ARGUMENT", "doppler is honoured by the tmux and pty backends only, not by headless sessions.", {
      suggestion: "Pass the secrets in env, or use backend tmux or pty with doppler.",
    });
  }
}

/** What a headless session keeps of its options for resume_session. */
export function storedHeadlessOptions(kind: BackendKind, input: Given): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (kind !== "headless") return out;
  for (const k of STORED) if (input[k] !== undefined) out[k] = input[k];
  return out;
}

/** The record's options for a session now running on `kind`: headless-only ones are dropped on a take-over to a terminal. */
export function optionsFor(kind: BackendKind, stored: Record<string, unknown>, input: Given): Record<string, unknown> {
  if (kind === "headless") return { ...stored, ...storedHeadlessOptions(kind, input) };
  const out = { ...stored };
  for (const k of STORED) delete out[k];
  return out;
}

/** Options passed to this launch only (never stored). */
export function transientOptions(input: Given): Record<string, unknown> {
  return input.mcp_servers ? { mcp_servers: input.mcp_servers } : {};
}

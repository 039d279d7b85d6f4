/**
 * The design's own argument names on start/resume: flat doppler_project / doppler_config, and a caller-chosen
 * session_id that makes start_session idempotent (the same id with the same options is the same session).
 */
import { createHash } from "node:crypto";
import type { StartInput } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import type { SessionRecord } from "../../store/schema.js";
import { canonicalJson } from "../../store/idempotency.js";

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
      throw new SessionError("INVALID_ARGUMENT", `doppler.${k} ${JSON.stringify(nested)} and doppler_${k} ${JSON.stringify(flat)} disagree; give one.`);
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
  const { prompt: _p, env, session_id: _s, stream_output: _o, idempotency_key: _k, doppler: _d, doppler_project: _dp, doppler_config: _dc, ...others } = input;
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
  if (RESERVED_IDS.has(id.toLowerCase())) throw new SessionError("INVALID_ARGUMENT", `session_id ${JSON.stringify(id)} is reserved; choose another.`);
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
  const why = [what.length ? `other ${what.join(", ")} than this call's` : "", differences.includes("prompt") ? "a prompt this call would not send (the session exists already)" : ""].filter(Boolean).join(", and ");
  throw new SessionError("ALREADY_EXISTS", `session ${existing.session_id} already exists: ${why}.`, {
    suggestion: differences.includes("prompt") && !what.length
      ? "Give the prompt with send_message (or start_session without a prompt returns the existing session); a new session needs another session_id."
      : "Use another session_id, call start_session with the session's own options and no prompt, or resume_session to bring it back with new options.",
    details: { session_id: existing.session_id, differences },
  });
}

/**
 * The design's own argument names on start/resume: flat doppler_project / doppler_config, and a caller-chosen
 * session_id that makes start_session idempotent (the same id with the same options is the same session).
 */
import { createHash } from "node:crypto";
import type { StartInput } from "../api/index.js";
import { SessionError } from "../core/errors.js";
import type { SessionRecord } from "../store/schema.js";

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
 * value is hashed into the record).
 */
export function startFingerprint(input: StartInput): string {
  const { prompt: _p, env, session_id: _s, stream_output: _o, ...rest } = input;
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])])) : v;
  const doppler = dopplerChoice(input);
  const { doppler: _d, doppler_project: _dp, doppler_config: _dc, ...others } = rest;
  return createHash("sha256")
    .update(JSON.stringify(canon({ ...others, doppler: doppler ?? null, env_names: Object.keys(env ?? {}).sort() })))
    .digest("hex");
}

/** A caller-chosen id: not a name the state directory uses for itself. */
export function checkChosenId(id: string): void {
  if (RESERVED_IDS.has(id.toLowerCase())) throw new SessionError("INVALID_ARGUMENT", `session_id ${JSON.stringify(id)} is reserved; choose another.`);
}

/** A start with the id of an existing session: the same session when the options match, otherwise refused. */
export function sameStart(existing: SessionRecord, fingerprint: string): boolean {
  if (existing.options.start_fingerprint === fingerprint) return true;
  throw new SessionError("INVALID_ARGUMENT", `session ${existing.session_id} already exists with other options.`, {
    suggestion: "Use another session_id, call start_session again with the same options, or resume_session to bring it back.",
  });
}

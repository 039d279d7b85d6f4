/**
 * Turns the text of state.json into a state, record by record: a record that fails the schema is set
 * aside (to be quarantined by the store) instead of rejecting the whole file, and dates that are not
 * dates are repaired (a created_at of "yesterday" must not get a session ended on adoption).
 */
import { z } from "zod";
import { SessionRecordSchema, sessionMap, type StateFile } from "./schema.js";

const TopSchema = z.object({
  version: z.string(),
  updated_at: z.string(),
  sessions: z.record(z.string(), z.unknown()),
});

export interface BadRecord {
  id: string;
  why: string;
  record: unknown;
}

export interface ParsedState {
  state: StateFile;
  /** Records that fail the schema, left out of `state`. */
  bad: BadRecord[];
  /** What was repaired, one line each ("<id>: created_at …"). */
  repairs: string[];
}

/** A zod error as one short line ("sessions.a.created_at: expected string"), not zod's JSON dump. */
export function describeIssues(e: z.ZodError, max = 3): string {
  const parts = e.issues.slice(0, max).map((i) => `${i.path.map(String).join(".") || "(top)"}: ${i.message}`);
  if (e.issues.length > max) parts.push(`… ${e.issues.length - max} more`);
  return parts.join("; ");
}

/** Throws (with a one-line reason) when the text is not JSON or not a state file at all. */
export function parseState(raw: string): ParsedState {
  if (!raw.trim()) throw new Error("the file is empty");
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new Error(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const top = TopSchema.safeParse(json);
  if (!top.success) throw new Error(`not a state file: ${describeIssues(top.error)}`);
  const sessions = sessionMap();
  const bad: BadRecord[] = [];
  const repairs: string[] = [];
  for (const id of Object.keys(top.data.sessions)) {
    const value = top.data.sessions[id];
    const fixed = migrateRecord(repairDates(id, value, repairs));
    const r = SessionRecordSchema.safeParse(fixed);
    if (r.success) sessions[id] = r.data;
    else bad.push({ id, why: describeIssues(r.error), record: value });
  }
  return { state: { version: top.data.version, updated_at: top.data.updated_at, sessions }, bad, repairs };
}

/** Fields of records written before the host reference (state version 1.0.0 servers), and where each goes in `host`. */
const HOST_FIELDS = { tmux_session: "target", tmux_pane_id: "pane", tmux_socket: "socket", owner_pid: "owner_pid" } as const;

/**
 * A record of an earlier server, as this one keeps it: its host fields move into `host` (sessions outlive servers,
 * so a live session started before an upgrade is adopted and reached as it was). A record without them is as it is.
 */
export function migrateRecord(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const old = Object.keys(HOST_FIELDS).filter((k) => k in value);
  if (!old.length) return value;
  const r: Record<string, unknown> = { ...value };
  const host: Record<string, unknown> = typeof r.host === "object" && r.host !== null ? { ...(r.host as object) } : {};
  for (const k of old) {
    const v = r[k];
    delete r[k];
    if (v !== undefined) host[HOST_FIELDS[k as keyof typeof HOST_FIELDS]] ??= v;
  }
  r.host = host;
  return r;
}

const OPTIONAL_DATES = ["started_at", "process_started_at", "last_active", "killed_at"] as const;

function isDate(v: unknown): v is string {
  return typeof v === "string" && v !== "" && Number.isFinite(Date.parse(v));
}

/**
 * created_at that is not a date becomes the earliest good date of the record (or now, when there is
 * none): never the epoch, which would make the session look ancient. Optional dates that are not dates go.
 */
function repairDates(id: string, value: unknown, repairs: string[]): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const r: Record<string, unknown> = { ...value };
  for (const k of OPTIONAL_DATES) {
    if (k in r && r[k] !== undefined && !isDate(r[k])) {
      repairs.push(`${id}: ${k} ${JSON.stringify(r[k])} is not a date; dropped`);
      delete r[k];
    }
  }
  if (!isDate(r.created_at)) {
    const known = OPTIONAL_DATES.map((k) => r[k])
      .filter(isDate)
      .sort((a, b) => Date.parse(a) - Date.parse(b));
    const now = new Date().toISOString();
    const to = known[0] ?? now;
    repairs.push(`${id}: created_at ${JSON.stringify(r.created_at)} is not a date; set to ${to}`);
    r.created_at = to;
  }
  return r;
}

/** The text of a quarantine file: what was set aside, why, and from where. */
export function quarantineText(bad: BadRecord[], from: string): string {
  // fromEntries defines own properties: an id such as "__proto__" stays a key.
  const records = Object.fromEntries(bad.map((b) => [b.id, { why: b.why, record: b.record }]));
  return JSON.stringify({ quarantined_at: new Date().toISOString(), from, records }, null, 2) + "\n";
}

/**
 * What a node sends is checked before anything here uses it or passes it on: a node may be broken, older or newer,
 * or hostile. A result is checked against its tool's output schema row by row — a row of a list (sessions, results,
 * conversations…) that does not match, or whose session_id is not a session id (`../..`), is dropped and counted,
 * the others kept — then as a whole (a result that still does not match fails that node's part only). What is
 * passed on is what the schema reads: fields it does not know are left out. A notice is
 * kept only in the shape this server's own notices have (known fields, a session id, a status, at most
 * NOTICE_MAX_CHARS as JSON).
 */
import { z } from "zod";
import { sessionId } from "../api/index.js";
import { SessionError } from "../core/errors.js";
import { STATUSES } from "../core/status.js";

type Args = Record<string, unknown>;

/** The element schema of an array field (through optional/default/nullable), if it is one. */
function elementOf(t: unknown): z.ZodType | undefined {
  let s = t;
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable) s = s.unwrap();
  return s instanceof z.ZodArray ? (s.element as z.ZodType) : undefined;
}

/** A row of a node as the schema reads it (fields it does not know left out), or why it is refused. */
function readRow(schema: z.ZodType, row: unknown): { row: unknown } | { why: string } {
  if (typeof row === "object" && row !== null && "session_id" in row && !sessionId.safeParse((row as Args).session_id).success) {
    return { why: `session_id ${JSON.stringify(String((row as Args).session_id).slice(0, 80))} is not a session id` };
  }
  const r = schema.safeParse(row);
  if (r.success) return { row: r.data };
  const i = r.error.issues[0];
  return { why: i ? `${i.path.join(".") || "(row)"}: ${i.message}` : "does not match" };
}

export interface Checked {
  value: Args;
  /** Rows dropped, and why the first one was. */
  dropped: number;
  why?: string;
}

/** The rows of one list of a node's answer that match `element`, with the count of those that did not. */
export function checkRows(element: z.ZodType, rows: unknown): { rows: Args[]; dropped: number; why?: string } {
  if (!Array.isArray(rows)) return { rows: [], dropped: 0, why: "not a list" };
  const out: Args[] = [];
  let why: string | undefined;
  for (const r of rows) {
    const read = readRow(element, r);
    if ("why" in read) why ??= read.why;
    else out.push(read.row as Args);
  }
  return { rows: out, dropped: rows.length - out.length, ...(why ? { why } : {}) };
}

/**
 * A node's answer to `tool` (already marked with its node): its bad rows dropped, then checked whole. Throws
 * INTERNAL naming the node when what is left is still not the tool's result.
 */
export function checkResult(node: string, tool: { name: string; output: z.ZodType }, value: unknown): Checked {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid(node, tool.name, "not an object");
  const out: Args = { ...(value as Args) };
  // The session a result is about becomes a route and a resource URI here: it must be a session id.
  if ("session_id" in out && !sessionId.safeParse(out.session_id).success)
    throw invalid(node, tool.name, `session_id ${JSON.stringify(String(out.session_id).slice(0, 80))} is not a session id`);
  let dropped = 0;
  let why: string | undefined;
  const shape = tool.output instanceof z.ZodObject ? (tool.output.shape as Record<string, unknown>) : {};
  for (const [key, field] of Object.entries(shape)) {
    const element = elementOf(field);
    if (!element || !Array.isArray(out[key])) continue;
    const c = checkRows(element, out[key]);
    out[key] = c.rows;
    dropped += c.dropped;
    why ??= c.why;
  }
  const whole = tool.output.safeParse(out);
  if (!whole.success) {
    const i = whole.error.issues[0];
    throw invalid(node, tool.name, i ? `${i.path.join(".") || "(result)"}: ${i.message}` : "does not match");
  }
  // What the schema reads: a field it does not know is not passed on.
  return { value: whole.data as Args, dropped, ...(why ? { why } : {}) };
}

function invalid(node: string, tool: string, why: string): SessionError {
  return new SessionError(
    "INTERNAL",
    `node ${node} answered ${tool} with a result that is not one (${why.slice(0, 300)}); nothing of it was used.`,
    {
      suggestion: "Check that the node runs a claude-sessions version this coordinator knows (claude-sessions nodes).",
      details: { node },
    },
  );
}

/** A notice of a node is at most this long (as JSON); a longer one is dropped. */
export const NOTICE_MAX_CHARS = 64 * 1024;

const short = z.string().max(4096);
const notice = z.object({
  event: z.enum(["permission", "blocked", "turn_ended", "failed", "dead", "limit", "shutdown_requested"]),
  session_id: sessionId,
  status: z.enum(STATUSES),
  previous: z.enum(STATUSES).optional(),
  team_name: z.string().max(200).optional(),
  teammate_name: z.string().max(200).optional(),
  tool_name: z.string().max(200).optional(),
  tool_input: z.unknown().optional(),
  turn_outcome: z.string().max(100).optional(),
  kind: z.string().max(100).optional(),
  text: short.optional(),
  choices: z.array(short).max(50).optional(),
  error: short.optional(),
  exit_code: z.number().optional(),
  reason: short.optional(),
});

/** A node's notice in the shape of this server's own (unknown fields left out), or undefined when it is not one. */
export function checkNotice(data: unknown): Args | undefined {
  const r = notice.safeParse(data);
  if (!r.success) return undefined;
  const out = Object.fromEntries(Object.entries(r.data).filter(([, v]) => v !== undefined));
  return JSON.stringify(out).length <= NOTICE_MAX_CHARS ? out : undefined;
}

/** Keys of a tool's object schema (its input or output). */
export function keysOf(schema: unknown): Set<string> {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return new Set(shape ? Object.keys(shape) : []);
}

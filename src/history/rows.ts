/** Small helpers shared by the read side: row values, times, cursors, usage rows. */
import { z } from "zod";
import { emptyUsage, type Usage } from "../claude/usage.js";
import { SessionError } from "../core/errors.js";

export type Row = Record<string, unknown>;

export const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0);
export const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);
export const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(num(v)).toISOString());

/** An ISO date/time (or anything Date.parse reads) → epoch ms; a bad value is INVALID_ARGUMENT. */
export function timeArg(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) throw new SessionError("INVALID_ARGUMENT", `${name} is not a date: ${JSON.stringify(v)}`, { suggestion: "Use an ISO 8601 date such as 2026-11-01 or 2026-11-01T09:00:00Z." });
  return ms;
}

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw new SessionError("INVALID_ARGUMENT", "cursor is not one this server returned", { suggestion: "Pass back a cursor exactly as a previous result gave it, or leave it out to start over." });
  }
}

/** A usage row (input, output, cache_5m, cache_1h, cache_read columns) → Usage. */
export function usageOfRow(r: Row): Usage {
  const u = emptyUsage();
  u.input_tokens = num(r.input);
  u.output_tokens = num(r.output);
  u.cache_creation_5m_input_tokens = num(r.cache_5m);
  u.cache_creation_1h_input_tokens = num(r.cache_1h);
  u.cache_creation_input_tokens = u.cache_creation_5m_input_tokens + u.cache_creation_1h_input_tokens;
  u.cache_read_input_tokens = num(r.cache_read);
  return u;
}

export function titleOf(r: Row): string | null {
  return strOrNull(r.custom_title) ?? strOrNull(r.summary) ?? strOrNull(r.first_prompt);
}

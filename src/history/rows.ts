/** Small helpers shared by the read side: row values, times, cursors, usage rows. */
import { z } from "zod";
import { emptyUsage, type Usage } from "../claude/usage.js";
import { SessionError } from "../core/errors.js";

export type Row = Record<string, unknown>;

export const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0);
export const strOrNull = (v: unknown): string | null => (typeof v === "string" ? v : null);
export const iso = (v: unknown): string | null => (v === null || v === undefined ? null : isoOfMs(num(v)));

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()` without the Date: a list of 10,000 conversations formats 20,000 times, and this is
 * about 4× faster (days → civil date by Howard Hinnant's algorithm). Years 1970–9999; others take the Date path.
 * tests/unit/history-pages.test.ts compares it with toISOString over random times.
 */
export function isoOfMs(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > 253_402_300_799_999) return new Date(ms).toISOString();
  const days = Math.floor(ms / 86_400_000);
  let rest = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const sec = Math.floor(rest / 1000);
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(m)}:${pad2(sec)}.${pad3(rest - sec * 1000)}Z`;
}

/** An ISO date/time (or anything Date.parse reads) → epoch ms; a bad value is INVALID_ARGUMENT. */
export function timeArg(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (!Number.isFinite(ms))
    throw new SessionError("INVALID_ARGUMENT", `${name} is not a date: ${JSON.stringify(v)}`, {
      suggestion: "Use an ISO 8601 date such as 2026-11-01 or 2026-11-01T09:00:00Z.",
    });
  return ms;
}

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw new SessionError("INVALID_ARGUMENT", "cursor is not one this server returned", {
      suggestion: "Pass back a cursor exactly as a previous result gave it, or leave it out to start over.",
    });
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

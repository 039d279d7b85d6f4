/**
 * An account's usage windows (issue 33): how much of its 5-hour and weekly windows is used and when each resets, as
 * the API's unified rate-limit headers say on every answer to a claude.ai login (docs/limits.md, measured). The CLI
 * passes them on in two places only:
 *
 *  - interactive (tmux, pty): its status line command's input, `rate_limits: {five_hour|seven_day: {used_percentage,
 *    resets_at (epoch s)}}` (2.1.197 and 2.1.332). A session run under an account gets `statusLineCommand` as its
 *    status line: it keeps the last such input that carries `rate_limits` in the account's file;
 *  - headless: the SDK's `rate_limit_event` (`rate_limit_info: {rateLimitType, utilization (0..1), resetsAt}`, one
 *    window per event), written to the same file in the status line's form (`noteRateLimitEvent`).
 *
 * The file is `<stateDir>/account-windows/<name>.json` (0600): the newest figures of any session of that account win.
 * An API key's answers carry none of these (the CLI ignores its per-minute headers): such an account has no figures.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { shQuote } from "../util/proc/shell.js";
import { toolPaths, type ToolPaths } from "../util/proc/tools.js";
import { ACCOUNT_NAME, accountLimits, accountRooms, readAccounts, type AccountRoom, type AccountUser } from "./accounts.js";

export const WINDOW_KINDS = ["five_hour", "seven_day"] as const;
export type WindowKind = (typeof WINDOW_KINDS)[number];

/** One window: the share of it used (percent) and when it resets. */
export interface UsageWindow {
  used_percent: number;
  resets_at: string;
}

export interface AccountWindows {
  five_hour?: UsageWindow;
  seven_day?: UsageWindow;
  /** When the CLI last reported them (the file's time). */
  as_of: string;
}

/** The file an account's windows are kept in; undefined for a name that is not an account's. */
export function windowsFile(stateDir: string, name: string): string | undefined {
  return ACCOUNT_NAME.test(name) && name !== "auto" ? join(stateDir, "account-windows", `${name}.json`) : undefined;
}

/** Makes the folder of the windows files (0700); the status line command writes into it. */
export function ensureWindowsDir(stateDir: string): void {
  mkdirSync(join(stateDir, "account-windows"), { recursive: true, mode: 0o700 });
}

/**
 * The status line command of a session run under an account: it keeps its input (JSON on stdin) in `file` when that
 * input carries `rate_limits`, replacing the file at once (rename), and prints nothing. Only server-made paths reach
 * the shell; every program is named by its absolute path (the session's PATH is not trusted).
 */
export function statusLineCommand(file: string, t: ToolPaths = toolPaths()): string {
  const tmp = `"$f.$$"`;
  return (
    `umask 077; f=${shQuote(file)}; ${shQuote(t.cat)} > ${tmp} 2>/dev/null; ` +
    `case "$(${shQuote(t.cat)} ${tmp} 2>/dev/null)" in *'"rate_limits"'*) ${shQuote(t.mv)} -f ${tmp} "$f" ;; ` +
    `*) ${shQuote(t.rm)} -f ${tmp} ;; esac 2>/dev/null; exit 0`
  );
}

function num(x: unknown): number | undefined {
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

/** An epoch (seconds, as the CLI gives it; milliseconds accepted) as ISO 8601; undefined when it is not a time. */
function isoOf(epoch: number | undefined): string | undefined {
  if (epoch === undefined || epoch <= 0) return undefined;
  const ms = epoch < 1e11 ? epoch * 1000 : epoch;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The windows in a status line input (or a file in its form); only well-formed windows are kept. */
export function windowsOf(doc: unknown): Omit<AccountWindows, "as_of"> {
  const rl = (doc as { rate_limits?: unknown } | null)?.rate_limits;
  const out: Omit<AccountWindows, "as_of"> = {};
  if (typeof rl !== "object" || rl === null) return out;
  for (const k of WINDOW_KINDS) {
    const w = (rl as Record<string, unknown>)[k] as { used_percentage?: unknown; resets_at?: unknown } | undefined;
    const used = num(w?.used_percentage);
    const at = isoOf(num(w?.resets_at));
    if (used !== undefined && used >= 0 && used <= 1000 && at)
      out[k] = { used_percent: Math.round(used * 10) / 10, resets_at: at };
  }
  return out;
}

/** An account's windows as last reported; undefined when none were (no file, or nothing readable in it). */
export function readWindows(stateDir: string, name: string): AccountWindows | undefined {
  const file = windowsFile(stateDir, name);
  if (!file) return undefined;
  try {
    const w = windowsOf(JSON.parse(readFileSync(file, "utf8")));
    if (!w.five_hour && !w.seven_day) return undefined;
    return { ...w, as_of: statSync(file).mtime.toISOString() };
  } catch {
    return undefined;
  }
}

/** What the SDK's rate_limit_event carries (SDKRateLimitInfo; 2.1.332 adds `unifiedWindows`). */
export interface RateLimitInfo {
  rateLimitType?: string;
  utilization?: number;
  resetsAt?: number;
  unifiedWindows?: Record<string, { utilization?: number; resetsAt?: number } | undefined>;
}

/**
 * A headless session's rate_limit_event, into its account's file in the status line's form (merged with the windows
 * already there). Events without figures (no utilization) change nothing.
 */
export function noteRateLimitEvent(file: string, info: RateLimitInfo): void {
  const seen: Record<string, { used_percentage: number; resets_at: number }> = {};
  const put = (kind: string | undefined, util: unknown, resets: unknown) => {
    const u = num(util);
    const r = num(resets);
    if (!kind || !(WINDOW_KINDS as readonly string[]).includes(kind) || u === undefined || r === undefined) return;
    seen[kind] = { used_percentage: u <= 1 ? u * 100 : u, resets_at: r };
  };
  for (const [k, w] of Object.entries(info.unifiedWindows ?? {})) put(k, w?.utilization, w?.resetsAt);
  if (!seen[info.rateLimitType ?? ""]) put(info.rateLimitType, info.utilization, info.resetsAt);
  if (!Object.keys(seen).length) return;
  let before: Record<string, unknown> = {};
  try {
    const d = JSON.parse(readFileSync(file, "utf8")) as { rate_limits?: Record<string, unknown> };
    if (d.rate_limits && typeof d.rate_limits === "object") before = d.rate_limits;
  } catch {
    /* first figures */
  }
  const tmp = `${file}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ rate_limits: { ...before, ...seen } }), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Each account's room with its windows as last reported (claude-sessions accounts, health_check, the web view). */
export function withWindows(stateDir: string, rooms: AccountRoom[]): AccountRoom[] {
  return rooms.map((r) => {
    const w = readWindows(stateDir, r.name);
    return w ? { ...r, windows: w } : r;
  });
}

/**
 * The accounts as the web view's cost page shows them: each one's sessions, limit and windows; none without an accounts
 * file, and the file's fault (never its values) when it does not read.
 */
export function accountsView(
  file: string | undefined,
  stateDir: string,
  users: readonly AccountUser[],
): { accounts: AccountRoom[]; error?: string } {
  if (!file) return { accounts: [] };
  try {
    return {
      accounts: withWindows(stateDir, accountRooms(readAccounts(file), users, Date.now(), accountLimits(stateDir))),
    };
  } catch (e) {
    return { accounts: [], error: e instanceof Error ? e.message : String(e) };
  }
}

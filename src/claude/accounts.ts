/**
 * The operator's accounts (issue 33): CLAUDE_SESSIONS_ACCOUNTS names a JSON file, the operator's own and 0600,
 * `{"accounts": {"<name>": {"config_dir": "/abs/path"} | {"api_key_env": "NAME"} | {"doppler": {"project"?, "config"?,
 * "secret": "NAME"}}}}`. A config_dir account is a Claude configuration folder with its own login (the CLI gets
 * CLAUDE_CONFIG_DIR); an api_key_env account names a variable of the server's environment, a doppler account a
 * Doppler secret (account-key.ts), whose value the CLI gets as ANTHROPIC_API_KEY. A key is never written in the file, and
 * no message here quotes the file's values (only its names). Read again whenever the file changes.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { SessionError } from "../core/errors.js";
import { ENV_NAME } from "../util/proc/env.js";
import type { AccountWindows } from "./account-windows.js";
import { fetchDopplerKey, fetchedKey, type DopplerSource } from "./account-key.js";

export type Account =
  { name: string; config_dir: string } | { name: string; api_key_env: string } | { name: string; doppler: DopplerSource };

/** Doppler's names (projects, configs), as sessions' own doppler option takes them. */
const DOPPLER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** An account's doppler entry, checked; undefined when it is not one (a message then says what it must be). */
function dopplerOf(v: unknown): DopplerSource | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).some((k) => !["project", "config", "secret"].includes(k))) return undefined;
  if (typeof o.secret !== "string" || !ENV_NAME.test(o.secret)) return undefined;
  for (const k of ["project", "config"] as const)
    if (o[k] !== undefined && (typeof o[k] !== "string" || !DOPPLER_NAME.test(o[k]))) return undefined;
  return {
    secret: o.secret,
    ...(typeof o.project === "string" ? { project: o.project } : {}),
    ...(typeof o.config === "string" ? { config: o.config } : {}),
  };
}

/** An account's name: what start_session's `account` takes ("auto" is the choice, never a name). */
export const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const FIX = "Fix the file CLAUDE_SESSIONS_ACCOUNTS names (docs/limits.md, Accounts); nothing was started.";

function bad(why: string): SessionError {
  return new SessionError("INVALID_ARGUMENT", `the accounts file (CLAUDE_SESSIONS_ACCOUNTS) ${why}`, { suggestion: FIX });
}

let cache: { path: string; key: string; accounts: ReadonlyMap<string, Account> } | undefined;

/** The accounts of the file; a file that is missing, not the server user's, readable by others or malformed throws. */
export function readAccounts(path: string): ReadonlyMap<string, Account> {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw bad("cannot be read");
  }
  const me = process.getuid?.();
  if (me !== undefined && st.uid !== me) throw bad("is not owned by the server's user");
  if (st.mode & 0o077) throw bad(`is open to other users (mode ${(st.mode & 0o777).toString(8)}; it must be 600)`);
  const key = `${st.ino}:${st.size}:${st.mtimeMs}`;
  if (cache?.path === path && cache.key === key) return cache.accounts;
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw bad("is not valid JSON");
  }
  const all = (doc as { accounts?: unknown } | null)?.accounts;
  if (typeof all !== "object" || all === null || Array.isArray(all)) throw bad('has no "accounts" object');
  const accounts = new Map<string, Account>();
  for (const [name, v] of Object.entries(all as Record<string, unknown>)) {
    if (!ACCOUNT_NAME.test(name) || name === "auto")
      throw bad(`names an account ${JSON.stringify(name.slice(0, 64))} (names: letters, digits, _ . -; not "auto")`);
    const o = (typeof v === "object" && v !== null && !Array.isArray(v) ? v : {}) as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length !== 1) throw bad(`account ${name}: give exactly one of config_dir, api_key_env or doppler`);
    const dop = "doppler" in o ? dopplerOf(o.doppler) : undefined;
    if (typeof o.config_dir === "string" && isAbsolute(o.config_dir)) accounts.set(name, { name, config_dir: o.config_dir });
    else if (typeof o.api_key_env === "string" && ENV_NAME.test(o.api_key_env))
      accounts.set(name, { name, api_key_env: o.api_key_env });
    else if (dop) accounts.set(name, { name, doppler: dop });
    else
      throw bad(
        `account ${name}: config_dir must be an absolute path, api_key_env the NAME of an environment variable (never a key), ` +
          "doppler {project?, config?, secret} Doppler names (the secret's NAME, never a key)",
      );
  }
  cache = { path, key, accounts };
  return accounts;
}

/** The account a name names; an unknown name (or no accounts file) is INVALID_ARGUMENT. */
export function accountNamed(path: string | undefined, name: string): Account {
  if (!path)
    throw new SessionError("INVALID_ARGUMENT", `account ${JSON.stringify(name.slice(0, 64))}: this server has no accounts`, {
      suggestion: "Leave account out, or have the operator set CLAUDE_SESSIONS_ACCOUNTS.",
    });
  const a = readAccounts(path).get(name);
  if (!a)
    throw new SessionError("INVALID_ARGUMENT", `unknown account ${JSON.stringify(name.slice(0, 64))}`, {
      suggestion: `The accounts are: ${[...readAccounts(path).keys()].join(", ")} (or "auto")`,
    });
  return a;
}

/** What the CLI's environment gets for an account: its config folder, or its API key read from `env` (never stored). */
export function accountEnv(a: Account, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  if ("config_dir" in a) return { CLAUDE_CONFIG_DIR: a.config_dir };
  if ("doppler" in a) {
    // Read from Doppler at admission (prepareAccount), kept in memory only.
    const k = fetchedKey(a.name, a.doppler);
    if (!k)
      throw new SessionError("DOPPLER_ERROR", `account ${a.name}: its key has not been read from Doppler`, {
        suggestion: "Start or resume the session again (its admission reads the key).",
      });
    return { ANTHROPIC_API_KEY: k };
  }
  const key = env[a.api_key_env];
  if (!key)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `account ${a.name}: its variable ${a.api_key_env} is not set in the server's environment`,
      { suggestion: "Have the operator set it for the server, or use another account." },
    );
  return { ANTHROPIC_API_KEY: key };
}

/** What an account needs before its environment can be given: a doppler account's key read (account-key.ts). */
export async function prepareAccount(a: Account, dopplerPath: string | undefined): Promise<void> {
  if ("doppler" in a) await fetchDopplerKey(a.name, a.doppler, dopplerPath);
}

/**
 * The Claude configuration folder a session's transcripts are under: its account's when that is a config_dir
 * account, else the server's (CLAUDE_CONFIG_DIR or ~/.claude). An accounts file that no longer reads falls back.
 */
export function configDirFor(accountsFile: string | undefined, serverDir: string, account: string | undefined): string {
  if (!account || !accountsFile) return serverDir;
  try {
    const a = readAccounts(accountsFile).get(account);
    return a && "config_dir" in a ? a.config_dir : serverDir;
  } catch {
    return serverDir;
  }
}

/** What an account's room is judged by: the sessions run under it and their limits (store records, structurally). */
export interface AccountUser {
  session_id: string;
  account?: string | undefined;
  limit?: { resets_at: string } | undefined;
}

export interface AccountRoom {
  name: string;
  kind: "config_dir" | "api_key_env" | "doppler";
  sessions: string[];
  /** The latest reset among its sessions' limits still ahead: the account is limited until then. */
  limited_until?: string;
  /** Its 5-hour and weekly windows as the CLI last reported them (a plan login's; claude/account-windows.ts). */
  windows?: AccountWindows;
}

/** Each account, its sessions and whether it is limited now (from its sessions' limits). */
export function accountRooms(
  accounts: ReadonlyMap<string, Account>,
  users: readonly AccountUser[],
  now: number,
  noted: Record<string, string> = {},
): AccountRoom[] {
  return [...accounts.values()].map((a) => {
    const mine = users.filter((u) => u.account === a.name);
    const until = [
      ...mine.map((u) => (u.limit ? Date.parse(u.limit.resets_at) : NaN)),
      noted[a.name] ? Date.parse(noted[a.name]!) : NaN,
    ].filter((t) => t > now);
    return {
      name: a.name,
      kind: "config_dir" in a ? "config_dir" : "api_key_env" in a ? "api_key_env" : "doppler",
      sessions: mine.map((u) => u.session_id),
      ...(until.length ? { limited_until: new Date(Math.max(...until)).toISOString() } : {}),
    };
  });
}

/** `auto`: an account not limited (the fewest sessions first, then the file's order), else the one whose limit resets soonest. */
export function pickAccount(
  accounts: ReadonlyMap<string, Account>,
  users: readonly AccountUser[],
  now: number,
  noted: Record<string, string> = {},
): string {
  const rooms = accountRooms(accounts, users, now, noted);
  if (!rooms.length)
    throw new SessionError("INVALID_ARGUMENT", "account auto: the accounts file names no account", { suggestion: FIX });
  const free = rooms.filter((r) => !r.limited_until).sort((a, b) => a.sessions.length - b.sessions.length);
  if (free[0]) return free[0].name;
  return rooms.sort((a, b) => Date.parse(a.limited_until!) - Date.parse(b.limited_until!))[0]!.name;
}

/** One line per account (the CLI's `accounts`, health_check's detail): name, kind, sessions, limited until. */
export function roomLine(r: AccountRoom): string {
  return (
    `${r.name}\t${r.kind}\t${r.sessions.length} session${r.sessions.length === 1 ? "" : "s"}${r.sessions.length ? ` (${r.sessions.join(", ")})` : ""}\t` +
    `${r.limited_until ? `limited until ${r.limited_until}` : "room"}${r.windows ? `\t${windowsText(r.windows)}` : ""}`
  );
}

/** "5h 42% (resets …), 7d 17% (resets …)": an account's windows for a line of text. */
export function windowsText(w: AccountWindows | undefined): string {
  if (!w) return "";
  const part = (label: string, x: AccountWindows["five_hour"]) =>
    x ? `${label} ${x.used_percent}% used (resets ${x.resets_at})` : "";
  return [part("5h", w.five_hour), part("7d", w.seven_day)].filter(Boolean).join(", ");
}

/**
 * Accounts seen limited, kept apart from the sessions (a session that switched away takes its limit with it):
 * `<stateDir>/limit-wakes/accounts/<name>` holds the reset time. What `auto` and switch_account pass by.
 */
export function noteAccountLimit(stateDir: string, name: string, resetsAt: string): void {
  if (!ACCOUNT_NAME.test(name)) return;
  const dir = join(stateDir, "limit-wakes", "accounts");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const before = accountLimits(stateDir)[name];
  if (before && Date.parse(before) >= Date.parse(resetsAt)) return;
  writeFileSync(join(dir, name), resetsAt, { mode: 0o600 });
}

/** The accounts noted limited: name → reset time (past ones too; accountRooms keeps the ones ahead). */
export function accountLimits(stateDir: string): Record<string, string> {
  const dir = join(stateDir, "limit-wakes", "accounts");
  const out: Record<string, string> = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (!ACCOUNT_NAME.test(n)) continue;
    try {
      const t = readFileSync(join(dir, n), "utf8").trim();
      if (Number.isFinite(Date.parse(t))) out[n] = t;
    } catch {
      /* gone */
    }
  }
  return out;
}

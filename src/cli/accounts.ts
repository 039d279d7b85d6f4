/**
 * `claude-sessions accounts` (issue 33): each account of CLAUDE_SESSIONS_ACCOUNTS, its sessions, whether it is limited,
 * and its usage windows (main.ts prints them escaped).
 */
import { accountLimits, accountRooms, readAccounts, roomLine } from "../claude/accounts.js";
import { withWindows } from "../claude/account-windows.js";
import type { Store } from "../store/store.js";

export async function accountLines(file: string | undefined, stateDir: string, store: Pick<Store, "read">): Promise<string[]> {
  if (!file) return ["no accounts configured (CLAUDE_SESSIONS_ACCOUNTS)"];
  const rooms = withWindows(
    stateDir,
    accountRooms(readAccounts(file), Object.values((await store.read()).sessions), Date.now(), accountLimits(stateDir)),
  );
  return rooms.length ? rooms.map(roomLine) : ["the accounts file names no account"];
}

/**
 * Session statuses and the one table that says which moves are legal.
 * Names follow the spec (starting, ready, busy, idle, error, dead, zombie) plus waiting_for_permission and blocked
 * (a screen of Claude Code other than a permission dialog waits for an answer: answer_prompt) and hibernated (the
 * process ended cleanly, the conversation is kept: the next prompt wakes it on its backend).
 */
export const STATUSES = [
  "starting",
  "ready",
  "busy",
  "idle",
  "waiting_for_permission",
  "blocked",
  "error",
  "dead",
  "zombie",
  "hibernated",
  "limited",
] as const;
export type Status = (typeof STATUSES)[number];

const T: Record<Status, readonly Status[]> = {
  starting: ["ready", "busy", "error", "dead", "zombie"],
  ready: ["busy", "waiting_for_permission", "blocked", "idle", "dead", "zombie", "error", "hibernated"],
  busy: ["idle", "waiting_for_permission", "blocked", "busy", "dead", "zombie", "error", "ready", "hibernated"],
  idle: ["busy", "ready", "idle", "waiting_for_permission", "blocked", "dead", "zombie", "error", "hibernated"],
  waiting_for_permission: ["busy", "idle", "waiting_for_permission", "blocked", "dead", "zombie", "error", "hibernated"],
  // A screen that waits for an answer (cs:blocked); any hook of the turn, or cs:unblocked, moves it on.
  blocked: ["busy", "idle", "ready", "waiting_for_permission", "blocked", "dead", "zombie", "error", "hibernated"],
  // error is reached when a start fails or the process misbehaves; the record stays for resume_session.
  error: ["busy", "ready", "idle", "dead", "starting", "zombie", "hibernated"],
  // Terminal until resume_session spawns a new process (which appends a "cs:spawn" event).
  dead: ["starting", "error", "hibernated"],
  zombie: ["dead", "starting"],
  // No process, the conversation kept (cs:hibernated); a wake's cs:spawn starts it again, kill_session ends it.
  hibernated: ["starting", "error", "dead"],
  // Shown, never folded: an idle or hibernated session whose last turn hit a usage limit (views.ts shownStatus, issue 33).
  limited: [],
};

export function canMove(from: Status, to: Status): boolean {
  return from === to || T[from].includes(to);
}

/** Statuses in which a live process is expected. */
export function isLive(s: Status): boolean {
  return s === "starting" || s === "ready" || s === "busy" || s === "idle" || s === "waiting_for_permission" || s === "blocked";
}

/** A session that is part of its team and takes prompts: live, or hibernated (the next prompt wakes it). */
export function inService(s: Status): boolean {
  return isLive(s) || s === "hibernated";
}

/** A turn is under way (running, or held by a permission request or another screen). */
export function inTurn(s: Status): boolean {
  return s === "busy" || s === "waiting_for_permission" || s === "blocked";
}

/** The session accepts a new prompt without queueing. */
export function acceptsPrompt(s: Status): boolean {
  return s === "ready" || s === "idle";
}

/** list_sessions' status_filter groups. */
export function statusGroup(s: Status): "active" | "inactive" | "error" {
  if (s === "error" || s === "zombie") return "error";
  return isLive(s) ? "active" : "inactive";
}

/**
 * The screens that hold a turn besides a permission request (answered by answer_prompt): auto mode's "can't check"
 * screen, plan approval, AskUserQuestion's question, MCP server approval, the trust and API-key questions, the usage-limit menu, a permission
 * dialog no hook reported, the bypass-mode warning, and any screen the server does not know (`unknown`).
 */
export const BLOCKED_KINDS = [
  "auto_mode_unavailable",
  "plan_approval",
  "question",
  "mcp_server",
  "trust",
  "api_key",
  "usage_limit",
  "permission_dialog",
  "bypass_warning",
  "unknown",
] as const;
export type BlockedKind = (typeof BLOCKED_KINDS)[number];

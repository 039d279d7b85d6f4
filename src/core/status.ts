/**
 * Session statuses and the one table that says which moves are legal.
 * Names follow the spec (starting, ready, busy, idle, error, dead, zombie) plus waiting_for_permission.
 */
export const STATUSES = ["starting", "ready", "busy", "idle", "waiting_for_permission", "error", "dead", "zombie"] as const;
export type Status = (typeof STATUSES)[number];

const T: Record<Status, readonly Status[]> = {
  starting: ["ready", "busy", "error", "dead", "zombie"],
  ready: ["busy", "waiting_for_permission", "idle", "dead", "zombie", "error"],
  busy: ["idle", "waiting_for_permission", "busy", "dead", "zombie", "error", "ready"],
  idle: ["busy", "ready", "idle", "waiting_for_permission", "dead", "zombie", "error"],
  waiting_for_permission: ["busy", "idle", "waiting_for_permission", "dead", "zombie", "error"],
  // error is reached when a start fails or the process misbehaves; the record stays for resume_session.
  error: ["busy", "ready", "idle", "dead", "starting", "zombie"],
  // Terminal until resume_session spawns a new process (which appends a "cs:spawn" event).
  dead: ["starting", "error"],
  zombie: ["dead", "starting"],
};

export function canMove(from: Status, to: Status): boolean {
  return from === to || T[from].includes(to);
}

/** Statuses in which a live process is expected. */
export function isLive(s: Status): boolean {
  return s === "starting" || s === "ready" || s === "busy" || s === "idle" || s === "waiting_for_permission";
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

/**
 * The names of the events in a session's log: Claude Code's hook events we subscribe to, and the events the
 * server itself appends (prefix "cs:"). Shared vocabulary of the hooks settings, the reducer and the drivers.
 */
export const HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "Notification",
  "Stop",
  "StopFailure",
  "SessionEnd",
  // Auto mode denied a tool call (its classifier said no; 2.1.197 also when the classifier cannot be reached).
  "PermissionDenied",
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

export const OWN_EVENTS = [
  "cs:spawn",
  "cs:exit",
  "cs:interrupted",
  "cs:start_failed",
  "cs:answered",
  "cs:snapshot",
  "cs:permission_fallback",
  "cs:turn_failed",
  "cs:blocked",
  "cs:unblocked",
  "cs:hibernated",
  "cs:shutdown_requested",
  "cs:sandbox_violation",
  "cs:limit_over",
  "cs:limit_wait",
] as const;
export type OwnEventName = (typeof OWN_EVENTS)[number];
export type EventName = HookEventName | OwnEventName;

/** Where a session runs: a tmux pane (outlives the server), a PTY owned by the server process, or a headless CLI
 * (stream-json through the Agent SDK, no terminal) owned by the server process. */
export const BACKEND_KINDS = ["tmux", "pty", "headless"] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

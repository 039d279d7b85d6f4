/**
 * Claude Code's permission modes (`--permission-mode`, the Agent SDK's `permissionMode`). The server always passes
 * one: a CLI left to its own default may pick a mode the server does not expect (2.1.331 defaults to `auto`).
 */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"] as const;
export type PermissionModeName = (typeof PERMISSION_MODES)[number];

/** The mode of a session started without `permission_mode`, unless CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE says otherwise. */
export const SERVER_DEFAULT_PERMISSION_MODE: PermissionModeName = "default";

/**
 * CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS's default, written once: how long a permission request waits for
 * respond_permission (a terminal session's hook, then Claude's dialog; a headless request, then a deny).
 */
export const DEFAULT_PERMISSION_TIMEOUT_MS = 120_000;

export function isPermissionMode(v: unknown): v is PermissionModeName {
  return typeof v === "string" && (PERMISSION_MODES as readonly string[]).includes(v);
}

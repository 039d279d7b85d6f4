/**
 * Claude Code's permission modes (`--permission-mode`, the Agent SDK's `permissionMode`). The server always passes
 * one: a CLI left to its own default may pick a mode the server does not expect (2.1.331 defaults to `auto`).
 */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"] as const;
export type PermissionModeName = (typeof PERMISSION_MODES)[number];

/** The mode of a session started without `permission_mode`, unless CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE says otherwise. */
export const SERVER_DEFAULT_PERMISSION_MODE: PermissionModeName = "default";

export function isPermissionMode(v: unknown): v is PermissionModeName {
  return typeof v === "string" && (PERMISSION_MODES as readonly string[]).includes(v);
}

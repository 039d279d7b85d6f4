/**
 * A Runner is one way of running sessions: where the process lives (its host), how the conversation is held (its
 * driver), and what it can do (its capabilities). The session layer asks capabilities; it never names a kind.
 */
import { HEADLESS_ONLY } from "../api/index.js";
import type { BackendKind } from "../core/events.js";
import type { Driver } from "./driver.js";
import type { Host, TerminalHost } from "./host.js";

/** Start/resume options that only some runners honour (every runner honours the others). */
export const RUNNER_OPTIONS = [...HEADLESS_ONLY, "doppler"] as const;
export type RunnerOption = (typeof RUNNER_OPTIONS)[number];

/** Options a runner may keep in a session's record for resume_session: its own, and the limits it applies itself. */
export const KEEPABLE_OPTIONS = ["max_turns", "max_budget_usd", ...HEADLESS_ONLY.filter((k) => k !== "mcp_servers")] as const;
export type KeepableOption = (typeof KEEPABLE_OPTIONS)[number];

export interface Capabilities {
  /** A terminal: paste, keys, a screen (stream_output mode screen, typing into other CLIs' sessions). */
  screen: boolean;
  /** Sessions outlive this server process. */
  survivesRestart: boolean;
  /** run_task starts its sessions here when the call names no backend, and keeps ready spares (warm pool). */
  warmPool: boolean;
  /** Permissions are answered through the blocking permission hook (a decisions folder); else the runner answers them. */
  permissionHook: boolean;
  /** Claude shows its folder-trust screen, which the driver answers; else the server checks trust before starting. */
  trustScreen: boolean;
  /** max_turns is the CLI's own agentic turn limit (kept in options); else the server counts prompts. */
  ownTurnLimit: boolean;
  /** Which of RUNNER_OPTIONS it honours (the rest are refused, never silently ignored). */
  honours: readonly RunnerOption[];
  /** Which options a session's record keeps for resume_session (never one that may hold secrets). */
  keeps: readonly KeepableOption[];
}

export interface Runner {
  readonly kind: BackendKind;
  readonly caps: Capabilities;
  /** Where its sessions' processes live. */
  readonly backend: Host;
  /** The same host as a terminal, when it has one (caps.screen). */
  readonly terminal?: TerminalHost;
  readonly driver: Driver;
}

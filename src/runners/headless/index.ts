/** The headless engine (issue #11): Claude Code through the Agent SDK, no terminal. */
export { HeadlessSession, type ExitInfo } from "./session.js";
export { buildSdkOptions, headlessEnv, type LaunchPlan } from "./options.js";
export { toPermissionResult, timeoutMessage, DEFAULT_PERMISSION_TIMEOUT_MS } from "./permissions.js";
export type {
  HeadlessOptions,
  PermissionAnswer,
  PermissionDecision,
  PermissionMode,
  PermissionRequestInfo,
  TurnResult,
  TurnUsage,
  PermissionDenial,
} from "./types.js";

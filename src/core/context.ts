/**
 * A team member's call (the member socket, server/member): the session it says it is, with that session's secret
 * until the tool's authorize step has checked it (and dropped it). The step fills in the member's team, name and
 * whether it leads; the call notes the teammate it acted on (`target`, for the audit line).
 */
export interface MemberCaller {
  readonly session_id: string;
  secret?: string;
  team?: string;
  name?: string;
  lead?: boolean;
  target?: string;
}

/** What a call receives from its caller: who asked, cancellation, and a way to report progress. */
export interface CallContext {
  /**
   * Who asked, for the audit log: `mcp:<stdio|http>:<client name>`, `web:<sign-in id prefix>`, `cli:<unix user>`,
   * `server:<reason>`. Never a token, a cookie or message text.
   */
  actor?: string;
  signal?: AbortSignal;
  /** Reports progress to the client (MCP progress notifications reset its request timeout). */
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
  /**
   * The directories the caller's MCP client declared as its roots (real paths), when it declared any; a session it
   * starts must work inside one of them as well as inside the operator's CLAUDE_SESSIONS_ROOTS (sessions/launch/roots.ts).
   */
  roots?: () => Promise<readonly string[] | undefined>;
  /** Set when a team member calls one of its own tools (a tool of toolset "member"). */
  member?: MemberCaller;
}

/** The same call with no cancel signal: for work that must go on once started (the caller handles the cancel itself). */
export function withoutSignal(ctx: CallContext): CallContext {
  const { signal: _s, ...rest } = ctx;
  return rest;
}

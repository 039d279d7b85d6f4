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
}

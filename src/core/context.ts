/** What a long call receives from its caller: cancellation, and a way to report progress. */
export interface CallContext {
  signal?: AbortSignal;
  /** Reports progress to the client (MCP progress notifications reset its request timeout). */
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
}

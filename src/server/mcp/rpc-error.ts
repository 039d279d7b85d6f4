/** Failures of the non-tool requests (resources, prompts, completions) as JSON-RPC errors carrying the SessionError body. */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { toSessionError } from "../../core/errors.js";

/** The MCP code for a missing resource (the spec's -32002). */
const RESOURCE_NOT_FOUND = -32002;

export function toMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  const e = toSessionError(err);
  const code =
    e.code === "SESSION_NOT_FOUND"
      ? RESOURCE_NOT_FOUND
      : e.code === "INTERNAL"
        ? ErrorCode.InternalError
        : ErrorCode.InvalidParams;
  return new McpError(code, `${e.code}: ${e.message}`, e.toBody());
}

/** Wraps a request handler so a SessionError reaches the client as a JSON-RPC error with its code and suggestion. */
export function rpc<A extends unknown[], R>(fn: (...a: A) => Promise<R>): (...a: A) => Promise<R> {
  return async (...a) => {
    try {
      return await fn(...a);
    } catch (e) {
      throw toMcpError(e);
    }
  };
}

/** The Agent SDK, imported lazily. */
let sdk: Promise<typeof import("@anthropic-ai/claude-agent-sdk")> | undefined;

/**
 * The Agent SDK, loaded once, with the first headless session: it is ~40 MB of memory a server without one never
 * needs. A launch's plan starts the import (headless/runner.ts), so that it runs beside the session layer's checks
 * and file writes rather than after them.
 */
export function loadSdk(): Promise<typeof import("@anthropic-ai/claude-agent-sdk")> {
  return (sdk ??= import("@anthropic-ai/claude-agent-sdk"));
}

import type { HealthCheck } from "../api/index.js";

/**
 * What the server knows about itself for health_check: its version and when it started (set by createServer), the
 * checks of the transport serving it (the HTTP server adds its MCP sessions while it runs), and the path of its
 * team members' socket (set by member/socket.ts when it starts one, also when it could not listen there).
 */
export const serverInfo: { version: string; startedAt: number; checks: Set<() => HealthCheck>; memberSocket?: string } = {
  version: "0.0.0",
  startedAt: Date.now(),
  checks: new Set<() => HealthCheck>(),
};

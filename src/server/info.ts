import type { HealthCheck } from "../api/index.js";

/**
 * What the server knows about itself for health_check: its version and when it started (set by createServer), and
 * the checks of the transport serving it (the HTTP server adds its MCP sessions while it runs).
 */
export const serverInfo = { version: "0.0.0", startedAt: Date.now(), checks: new Set<() => HealthCheck>() };

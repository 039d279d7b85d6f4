/** What the server knows about itself for health_check: its version and when it started (set by createServer). */
export const serverInfo = { version: "0.0.0", startedAt: Date.now() };

/**
 * Logging goes to stderr (stdout is the MCP protocol channel) and optionally to a file.
 * Never log secret values: callers log names, not environments.
 */
import { appendFileSync } from "node:fs";

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export function createLogger(opts: { level?: Level; file?: string } = {}): Logger {
  const min = ORDER[opts.level ?? "info"];
  const emit = (level: Level, msg: string) => {
    if (ORDER[level] < min) return;
    const line = `${new Date().toISOString()} ${level} ${msg}\n`;
    process.stderr.write(`[claude-sessions] ${line}`);
    if (opts.file) {
      try {
        appendFileSync(opts.file, line, { mode: 0o600 });
      } catch {
        /* a log file that cannot be written must not take the server down */
      }
    }
  };
  return {
    debug: (m) => emit("debug", m),
    info: (m) => emit("info", m),
    warn: (m) => emit("warn", m),
    error: (m) => emit("error", m),
  };
}

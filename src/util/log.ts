/**
 * Logging goes to stderr (stdout is the MCP protocol channel) and optionally to a file.
 * Never log secret values: callers log names, not environments. A message often carries outside text (a node's
 * words, a session's error): its control characters are escaped, so one message is one line and moves no cursor.
 */
import { appendFileSync } from "node:fs";
import { safeLine } from "./terminal-text.js";

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
    const line = `${new Date().toISOString()} ${level} ${safeLine(msg)}\n`;
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

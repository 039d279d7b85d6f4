/**
 * stream_output mode "log" for headless sessions: there is no terminal output, so the SDK's messages are
 * written to the session's output.log as readable lines (assistant text, tool uses, each turn's result).
 */
import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";

const MAX_INPUT = 2000;

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** One message as log text (ending with a newline), or undefined for messages the log leaves out. */
export function logLine(m: SDKMessage): string | undefined {
  if (m.type === "assistant") {
    const out: string[] = [];
    for (const b of m.message.content) {
      if (b.type === "text") out.push(b.text);
      else if (b.type === "tool_use") out.push(`[tool] ${b.name} ${clip(JSON.stringify(b.input), MAX_INPUT)}`);
    }
    return out.length ? out.join("\n") + "\n" : undefined;
  }
  if (m.type === "result") {
    const what = m.subtype === "success" ? (m.is_error ? "error" : "done") : m.subtype;
    return `[result] ${what} in ${m.duration_ms} ms, ${m.num_turns} turn(s)\n`;
  }
  return undefined;
}

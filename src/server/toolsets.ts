/**
 * Toolsets (CLAUDE_SESSIONS_TOOLSETS, issue 25): which tools a server offers, so a client pays in context only
 * for the tools it uses. Every tool is in exactly one set (tests/unit/toolsets.test.ts). Resources and prompts
 * use the core tools (session://, start_task, handoff, review_team) and are offered with core.
 */
import type { ToolsetName } from "../config.js";
import type { Tool } from "./tool.js";
import { TOOLS } from "./tools/index.js";

export const TOOLSETS: Record<Exclude<ToolsetName, "all">, readonly string[]> = {
  core: ["start_session", "resume_session", "send_message", "wait_for_completion", "stream_output", "respond_permission", "answer_prompt", "interrupt_session", "list_sessions", "kill_session", "run_task"],
  context: ["reset_session", "compact_session"],
  teams: ["broadcast_message", "wait_for_sessions", "sync_context", "fan_out", "merge_worktree"],
  history: ["list_conversations", "get_conversation", "search_conversations", "get_execution_history", "clear_execution_history"],
  admin: ["health_check", "configure"],
};

function expand(sets: readonly ToolsetName[]): Set<string> {
  return new Set(sets.flatMap((s) => (s === "all" ? Object.values(TOOLSETS).flat() : TOOLSETS[s])));
}

/** The tools of these toolsets, in the listing's order. */
export function toolsOf(sets: readonly ToolsetName[]): Tool[] {
  const names = expand(sets);
  return TOOLS.filter((t) => names.has(t.name));
}

/** Resources and prompts come with the core tools they lead to. */
export function offersCore(sets: readonly ToolsetName[]): boolean {
  return expand(sets).has("start_session");
}

/**
 * Toolsets (CLAUDE_SESSIONS_TOOLSETS, issue 25): which tools a server offers, so a client pays in context only
 * for the tools it uses. Each tool names its set in its declaration (tool.ts); the lists here are derived from
 * them, in the listing's order. Resources and prompts use the core tools (session://, start_task, handoff,
 * review_team) and are offered with core.
 */
import type { ToolsetName } from "../config.js";
import type { Tool } from "./tool.js";
import { TOOLS } from "./tools/index.js";

type Set_ = Exclude<ToolsetName, "all">;
const namesOf = (s: Set_): readonly string[] => TOOLS.filter((t) => t.toolset === s).map((t) => t.name);

/** Each toolset's tool names, from the tools' declarations (a toolset added to ToolsetName must be added here). */
export const TOOLSETS: Record<Set_, readonly string[]> = {
  core: namesOf("core"),
  context: namesOf("context"),
  teams: namesOf("teams"),
  history: namesOf("history"),
  admin: namesOf("admin"),
  automations: namesOf("automations"),
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

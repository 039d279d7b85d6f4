/** Claude's launch options as a record keeps them for resume_session (read back defensively: stored JSON). */
import type { StartInput } from "../api/index.js";
import type { ClaudeOptions } from "../claude/launch.js";

/** The launch options a record keeps for resume (read back defensively: the stored form is untyped JSON). */
export function pickClaudeOptions(o: Record<string, unknown> | StartInput): ClaudeOptions {
  const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const list = (v: unknown) => (Array.isArray(v) && v.length && v.every((x) => typeof x === "string") ? [...(v as string[])] : undefined);
  const out: ClaudeOptions = {};
  const model = str(o.model);
  const permission = str(o.permission_mode);
  const append = str(o.append_system_prompt);
  const dirs = list(o.add_dirs);
  const allowed = list(o.allowed_tools);
  const disallowed = list(o.disallowed_tools);
  if (model) out.model = model;
  if (permission) out.permission_mode = permission;
  if (append) out.append_system_prompt = append;
  if (dirs) out.add_dirs = dirs;
  if (allowed) out.allowed_tools = allowed;
  if (disallowed) out.disallowed_tools = disallowed;
  return out;
}

/** Claude's own launch options (argv on a terminal, the SDK's options headless), from a call or a record. */
import type { ClaudeOptions } from "../../claude/launch.js";
import type { StoredOptions } from "../../store/options.js";

/** The options of `o` that Claude takes (empty values left out). */
export function pickClaudeOptions(o: Pick<StoredOptions, keyof ClaudeOptions>): ClaudeOptions {
  const out: ClaudeOptions = {};
  if (o.model) out.model = o.model;
  if (o.permission_mode) out.permission_mode = o.permission_mode;
  if (o.append_system_prompt) out.append_system_prompt = o.append_system_prompt;
  if (o.add_dirs?.length) out.add_dirs = [...o.add_dirs];
  if (o.allowed_tools?.length) out.allowed_tools = [...o.allowed_tools];
  if (o.disallowed_tools?.length) out.disallowed_tools = [...o.disallowed_tools];
  return out;
}

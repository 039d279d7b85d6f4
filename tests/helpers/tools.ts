/**
 * Every tool's name → its input and output schema from src/api, so the test client is typed per tool:
 * `callOk("start_session", {cwd})` checks the arguments and types the result at compile time (`npm run typecheck`
 * covers tests). tests/unit/tools.test.ts checks this table names exactly the tools the server lists.
 */
import type { z } from "zod";
import * as api from "../../src/api/index.js";

export const TOOLS = {
  start_session: [api.startInput, api.startOutput],
  resume_session: [api.resumeInput, api.resumeOutput],
  kill_session: [api.killInput, api.killOutput],
  reset_session: [api.resetInput, api.resetOutput],
  compact_session: [api.compactInput, api.compactOutput],
  list_sessions: [api.listInput, api.listOutput],
  send_message: [api.sendInput, api.sendOutput],
  wait_for_completion: [api.waitInput, api.waitOutput],
  stream_output: [api.streamInput, api.streamOutput],
  respond_permission: [api.respondInput, api.respondOutput],
  answer_prompt: [api.answerPromptInput, api.answerPromptOutput],
  interrupt_session: [api.interruptInput, api.interruptOutput],
  health_check: [api.healthInput, api.healthOutput],
  configure: [api.configureInput, api.configureOutput],
  list_conversations: [api.listConversationsInput, api.listConversationsOutput],
  get_conversation: [api.getConversationInput, api.getConversationOutput],
  search_conversations: [api.searchConversationsInput, api.searchConversationsOutput],
  get_execution_history: [api.getExecutionsInput, api.getExecutionsOutput],
  clear_execution_history: [api.clearExecutionsInput, api.clearExecutionsOutput],
  broadcast_message: [api.broadcastInput, api.broadcastOutput],
  wait_for_sessions: [api.waitManyInput, api.waitManyOutput],
  sync_context: [api.syncInput, api.syncOutput],
  run_task: [api.runTaskInput, api.runTaskOutput],
  fan_out: [api.fanOutInput, api.fanOutOutput],
  merge_worktree: [api.mergeInput, api.mergeOutput],
} as const satisfies Record<string, readonly [z.ZodType, z.ZodType]>;

export type ToolName = keyof typeof TOOLS;
/** What a caller may send (the schema's input side: defaults optional). */
export type ToolArgs<N extends ToolName> = z.input<(typeof TOOLS)[N][0]>;
type AllKeys<U> = U extends unknown ? keyof U : never;
/** A union of object types read as one: every member's fields, those not in every member possibly undefined. */
type Flatten<U> = { [K in AllKeys<U>]: U extends unknown ? (K extends keyof U ? U[K] : undefined) : never };
type Output<N extends ToolName> = z.output<(typeof TOOLS)[N][1]>;
/**
 * What a successful call returns (structuredContent, the output schema's parsed side). list_sessions' rows are a
 * summary or, with include_metadata, the record: read as one type so a test can look at a row's fields.
 */
export type ToolData<N extends ToolName> = N extends "list_sessions"
  ? Omit<Output<N>, "sessions"> & { sessions: Array<Flatten<Output<"list_sessions">["sessions"][number]>> }
  : Output<N>;

/**
 * Which result fields tools/list shows (issue 25): every required field, plus the few a model reads to decide what
 * to do next (the reply, what stopped a turn). The other fields are still in every result — its structured content
 * and its text copy — and in the README; the zod schemas still check every result. A listed result schema stays open
 * (no additionalProperties: false), so a client accepts the fields it was not shown.
 */
export const KEY_RESULT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  start_session: ["attach_command", "warnings"],
  resume_session: ["warnings"],
  send_message: ["response", "timed_out", "turn_outcome", "error", "pending_permission", "blocked"],
  wait_for_completion: ["last_response", "turn_outcome", "error", "pending_permission", "blocked"],
  stream_output: ["text", "items", "cursor"],
  // structured_output is any JSON value (a schema with no type): named by output_schema's description instead.
  run_task: ["response", "turn_outcome", "error", "pending_permission", "blocked"],
  sync_context: ["session_id", "warnings", "error", "results"],
  broadcast_message: ["team_name"],
  health_check: ["member_socket"],
};

/**
 * Arguments the listing leaves out: aliases of a listed argument (doppler.project, doppler.config), one the
 * server ignores, and wait_for_usage of send_message and run_task (issue 38; the core listing has no byte left, and a result
 * with `usage_pending` says the figures follow). They are still accepted by every transport (docs/tools.md).
 */
export const UNLISTED_ARGUMENTS: ReadonlySet<string> = new Set([
  "doppler_project",
  "doppler_config",
  "poll_interval_ms",
  "wait_for_usage",
  "account",
]);

/** A tool that takes every argument of another: the listing shows only what it adds or changes (listing.ts). */
export const TAKES_ARGUMENTS_OF: Readonly<Record<string, string>> = { run_task: "start_session", schedule_task: "run_task" };

/**
 * Which session changes are webhook events, and what their bodies say. `fields` never hold a secret or the prompt's
 * or reply's text; `text` holds what only endpoints with `include_text` get (a reply, a permission's tool input, a
 * screen's text, an error's text).
 */
import type { SessionChange } from "../../sessions/service.js";
import type { WebhookEvent } from "./config.js";

export interface WebhookNotice {
  event: WebhookEvent;
  fields: Record<string, unknown>;
  text?: Record<string, unknown>;
}

/** The screens that say the account or the API is out of its limits (session.limited), not a question for a person. */
const LIMIT_SCREENS = new Set(["usage_limit"]);

export function webhookOf(c: SessionChange): WebhookNotice | undefined {
  const base = {
    session_id: c.session_id,
    status: c.status as string,
    ...(c.previous ? { previous: c.previous as string } : {}),
  };
  const f = c.fold;
  const status = c.status as string;
  // Another part of the server may add a `limited` status (a usage or rate limit): its webhook is session.limited.
  if (status === "limited" && c.previous !== c.status)
    return { event: "session.limited", fields: { ...base, reason: "limited" } };
  const opened = c.events.some((e) => e.hook_event_name === "PermissionRequest");
  if (c.status === "waiting_for_permission" && (c.previous !== c.status || opened) && f.pending_permission) {
    return {
      event: "session.needs_you",
      fields: { ...base, kind: "permission", tool_name: f.pending_permission.tool_name },
      text: { tool_input: f.pending_permission.tool_input },
    };
  }
  const shown = c.events.some((e) => e.hook_event_name === "cs:blocked");
  if (c.status === "blocked" && (c.previous !== c.status || shown) && f.blocked) {
    const event = LIMIT_SCREENS.has(f.blocked.kind) ? "session.limited" : "session.needs_you";
    return { event, fields: { ...base, kind: f.blocked.kind, choices: [...f.blocked.choices] }, text: { text: f.blocked.text } };
  }
  if (c.previous === undefined || c.previous === c.status) return undefined;
  if (c.status === "dead" || c.status === "zombie") {
    return {
      event: "session.died",
      fields: {
        ...base,
        ...(f.exit_code !== undefined ? { exit_code: f.exit_code } : {}),
        ...(f.end_reason ? { reason: f.end_reason } : {}),
      },
    };
  }
  if (
    (c.status === "idle" || c.status === "error") &&
    (c.previous === "busy" || c.previous === "waiting_for_permission" || c.previous === "blocked")
  ) {
    return {
      event: "turn.ended",
      fields: { ...base, turn_count: f.turn_count, ...(f.last_turn ? { turn_outcome: f.last_turn } : {}) },
      text: {
        ...(f.last_response !== undefined ? { response: f.last_response } : {}),
        ...(f.last_error ? { error: f.last_error } : {}),
      },
    };
  }
  return undefined;
}

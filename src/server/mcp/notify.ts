/**
 * Notifications that need no subscription: when a session needs a permission answer or a screen's answer (blocked),
 * ends a turn, fails or dies, its sandbox refuses something (sandbox_violation), a team member asks to be ended (request_shutdown),
 * or a time limit acts on it, every client hears it as a `notifications/message` (the logging capability; the SDK
 * honours logging/setLevel). Driven by SessionService.subscribe, so it fires as the hook's line is folded.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { TurnUsage } from "../../sessions/deps.js";
import type { SessionChange, SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";

export const NOTIFY_LOGGER = "claude-sessions";

export interface SessionNotice extends Partial<Omit<TurnUsage, "turn">> {
  event:
    | "permission"
    | "blocked"
    | "turn_ended"
    | "failed"
    | "dead"
    | "limit"
    | "limited"
    | "shutdown_requested"
    | "sandbox_violation"
    | "usage"
    | "overlap";
  session_id: string;
  team_name?: string;
  teammate_name?: string;
  status: string;
  previous?: string;
  tool_name?: string;
  tool_input?: unknown;
  turn_outcome?: string;
  /** blocked: the screen's kind, what it says and its choices (answer_prompt). */
  kind?: string;
  text?: string;
  choices?: string[];
  error?: string;
  exit_code?: number;
  reason?: string;
  /** sandbox_violation: the session's count so far. */
  sandbox_violations?: number;
  /** usage: the turn (its number) whose send_message returned with usage_pending, its figures and the session's totals. */
  turn?: number;
  /** overlap (the conflict radar): the other live session of the same repository that edited the same file. */
  other_session_id?: string;
  file?: string;
  /** limited: when the usage or rate limit lifts, its kind, and when the server wakes the session (docs/limits.md). */
  resets_at?: string;
  limit_kind?: string;
  wake_at?: string;
}

/** What a change means for a person or an orchestrator, with its level; undefined when it is not worth a message. */
export function noticeOf(c: SessionChange): { level: LoggingLevel; notice: SessionNotice } | undefined {
  const n = stateNotice(c);
  if (n) return n;
  // The sandbox refused a connection or saw a secret's sentinel go elsewhere (when nothing else is worth saying).
  const v = c.events.filter((e) => e.hook_event_name === "cs:sandbox_violation").at(-1);
  if (v)
    return {
      level: "warning",
      notice: {
        event: "sandbox_violation",
        session_id: c.session_id,
        status: c.status,
        sandbox_violations: c.fold.sandbox_violations ?? 1,
        ...(v.message ? { reason: v.message } : {}),
      },
    };
  return undefined;
}

function stateNotice(c: SessionChange): { level: LoggingLevel; notice: SessionNotice } | undefined {
  const base = { session_id: c.session_id, status: c.status, ...(c.previous ? { previous: c.previous } : {}) };
  const f = c.fold;
  // A team member asked to be ended (its member server's request_shutdown): kill_session approves.
  if (c.events.some((e) => e.hook_event_name === "cs:shutdown_requested")) {
    return { level: "warning", notice: { event: "shutdown_requested", ...base, reason: f.shutdown_requested ?? "requested" } };
  }
  // A turn hit a usage limit and the server recorded when it lifts (cs:limit_wait): the session is parked until then.
  if (f.limit?.resets_at && c.events.some((e) => e.hook_event_name === "cs:limit_wait")) {
    return {
      level: "warning",
      notice: {
        event: "limited",
        ...base,
        status: "limited",
        resets_at: f.limit.resets_at,
        limit_kind: f.limit.kind,
        ...(f.limit.wake_at ? { wake_at: f.limit.wake_at } : {}),
        error: f.limit.message,
      },
    };
  }
  const opened = c.events.some((e) => e.hook_event_name === "PermissionRequest");
  if (c.status === "waiting_for_permission" && (c.previous !== c.status || opened) && f.pending_permission) {
    return {
      level: "warning",
      notice: {
        event: "permission",
        ...base,
        tool_name: f.pending_permission.tool_name,
        tool_input: f.pending_permission.tool_input,
      },
    };
  }
  const shown = c.events.some((e) => e.hook_event_name === "cs:blocked");
  if (c.status === "blocked" && (c.previous !== c.status || shown) && f.blocked) {
    return {
      level: "warning",
      notice: { event: "blocked", ...base, kind: f.blocked.kind, text: f.blocked.text, choices: [...f.blocked.choices] },
    };
  }
  if (c.previous === undefined) return undefined;
  // A whole turn folded in one change (its prompt and its Stop read together, a fast turn under load) went from idle
  // to idle: it ended all the same.
  const ended = c.events.some((e) => e.hook_event_name === "Stop" || e.hook_event_name === "StopFailure");
  if (c.previous === c.status && !(ended && c.status === "idle")) return undefined;
  if (c.status === "error")
    return { level: "error", notice: { event: "failed", ...base, ...(f.last_error ? { error: f.last_error } : {}) } };
  if (c.status === "dead" || c.status === "zombie") {
    return {
      level: "warning",
      notice: {
        event: "dead",
        ...base,
        ...(f.exit_code !== undefined ? { exit_code: f.exit_code } : {}),
        ...(f.end_reason ? { reason: f.end_reason } : {}),
      },
    };
  }
  if (
    c.status === "idle" &&
    (ended || c.previous === "busy" || c.previous === "waiting_for_permission" || c.previous === "blocked")
  ) {
    const failed = f.last_turn === "failed";
    return {
      level: failed ? "error" : f.last_turn === "interrupted" ? "notice" : "info",
      notice: {
        event: failed ? "failed" : "turn_ended",
        ...base,
        ...(f.last_turn ? { turn_outcome: f.last_turn } : {}),
        ...(failed && f.last_error ? { error: f.last_error } : {}),
      },
    };
  }
  return undefined;
}

/** Sends the notices of every session change to this client; returns the unsubscribe. */
export function startNotifications(server: Server, svc: SessionService, log: Logger): () => void {
  const teams = async (id: string) => {
    const r = await svc.deps.store.get(id).catch(() => undefined);
    return {
      ...(r?.team_name ? { team_name: r.team_name } : {}),
      ...(r?.teammate_name ? { teammate_name: r.teammate_name } : {}),
    };
  };
  const send = (level: LoggingLevel, notice: SessionNotice) => {
    void server
      .sendLoggingMessage({ level, logger: NOTIFY_LOGGER, data: notice })
      .catch((e: unknown) => log.debug(`notification not sent: ${String(e)}`));
  };
  const offChange = svc.subscribe((c) => {
    const n = noticeOf(c);
    if (!n) return;
    // The team comes from the record (served from memory): the notice goes out once it is known.
    void teams(c.session_id).then((t) => send(n.level, { ...n.notice, ...t }));
  });
  const offLimit = svc.onLimit((id, kind, detail) => {
    const s = svc.deps.registry.followed(id);
    void teams(id).then((t) =>
      send("warning", { event: "limit", session_id: id, status: s?.fold.status ?? "dead", reason: `${kind}: ${detail}`, ...t }),
    );
  });
  // A turn's usage read after its send_message returned (usage_pending): its figures and the session's totals.
  const offUsage = svc.onTurnUsage((id, u) => {
    const s = svc.deps.registry.followed(id);
    void teams(id).then((t) => send("info", { event: "usage", session_id: id, status: s?.fold.status ?? "idle", ...u, ...t }));
  });
  const offOverlap = svc.onOverlap((o) => {
    const s = svc.deps.registry.followed(o.session_id);
    void teams(o.session_id).then((t) =>
      send("warning", {
        event: "overlap",
        session_id: o.session_id,
        status: s?.fold.status ?? "idle",
        other_session_id: o.other_session_id,
        file: o.file,
        ...t,
      }),
    );
  });
  return () => {
    offChange();
    offLimit();
    offUsage();
    offOverlap();
  };
}

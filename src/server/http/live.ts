/**
 * The page's live feeds, as server-sent events driven by SessionService.subscribe (the event logs): the list of
 * every session, and one session's status, screen and transcript. The page never polls; while a session page is
 * open and the session lives, the server also re-reads its screen a few times a second (Claude draws between hooks)
 * and sends a frame only when the screen changed.
 */
import type { ServerResponse } from "node:http";
import * as api from "../../api/index.js";
import { isLive } from "../../core/status.js";
import type { SessionChange, SessionService } from "../../sessions/service.js";
import { limitedShown } from "../../sessions/views.js";
import type { CallRouter, Tool } from "../tool.js";
import { listSessions } from "../tools/core/list-sessions.js";
import { streamOutputTool } from "../tools/core/stream-output.js";

const SCREEN_EVERY_MS = 250;
const HEARTBEAT_MS = 20_000;
/** After a change, the transcript is re-read for this long (Claude writes its reply line just after Stop). */
const TRANSCRIPT_AFTER_CHANGE_MS = 3_000;

export interface Feed {
  send(event: string, data: unknown): void;
  onClose(fn: () => void): void;
}

export function openFeed(res: ServerResponse): Feed {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.write(": hello\n\n");
  const beat = setInterval(() => res.write(": beat\n\n"), HEARTBEAT_MS);
  const closers: Array<() => void> = [() => clearInterval(beat)];
  res.on("close", () => {
    for (const c of closers) c();
  });
  return {
    send(event, data) {
      if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    onClose: (fn) => void closers.push(fn),
  };
}

/**
 * What a row of the list shows, from a change (no store read, no tmux call: a hook reaches the page at once); null
 * clears a field the page holds. The cost is not in the fold: it comes with the totals once a turn's usage is recorded (listFeed).
 */
export function changeRow(c: SessionChange): Record<string, unknown> {
  const f = c.fold;
  // As list_sessions shows it: an idle or hibernated session whose last turn hit a usage limit is limited.
  const limited = f.limit?.resets_at !== undefined && limitedShown(c.status);
  return {
    session_id: c.session_id,
    status: limited ? "limited" : c.status,
    limit: limited
      ? {
          resets_at: f.limit!.resets_at,
          limit_kind: f.limit!.kind,
          reset_known: f.limit!.reset_known,
          message: f.limit!.message,
          ...(f.limit!.wake_at ? { wake_at: f.limit!.wake_at } : {}),
        }
      : null,
    turn_count: f.turn_count,
    ...(f.last_event_at ? { last_active: f.last_event_at } : {}),
    pending_permission: f.pending_permission
      ? { tool_name: f.pending_permission.tool_name, tool_input: f.pending_permission.tool_input }
      : null,
    blocked:
      f.blocked && c.status === "blocked" ? { kind: f.blocked.kind, text: f.blocked.text, choices: f.blocked.choices } : null,
    // A team member's request to be ended (request_shutdown), as list_sessions shows it: while its process lives.
    shutdown_requested: f.shutdown_requested && isLive(c.status) ? f.shutdown_requested : null,
  };
}

/**
 * With nodes (a coordinator): the tools through its router, so the page sees and drives every machine's sessions.
 * A remote session's row changes with its node's notices (permission, turn end, failure, death).
 */
async function call<T>(
  svc: SessionService,
  router: CallRouter | undefined,
  tool: Tool,
  args: Record<string, unknown>,
): Promise<T> {
  const r = router ? await router.invoke(tool, svc, args, {}) : await tool.invoke(svc, args, {});
  if (!r.ok) throw r.error;
  return r.value as T;
}

function noticeRow(d: Record<string, unknown>): Record<string, unknown> {
  const shutdown =
    d.event === "shutdown_requested" ? { shutdown_requested: d.reason } : d.event === "dead" ? { shutdown_requested: null } : {};
  return {
    session_id: d.session_id,
    status: d.status,
    node: d.node,
    node_status: null,
    pending_permission: d.event === "permission" ? { tool_name: d.tool_name, tool_input: d.tool_input } : null,
    ...shutdown,
  };
}

export async function listFeed(svc: SessionService, feed: Feed, router?: CallRouter): Promise<void> {
  const pending: SessionChange[] = [];
  let ready = false;
  const off = svc.subscribe((c) => (ready ? feed.send("change", changeRow(c)) : pending.push(c)));
  feed.onClose(off);
  if (router) feed.onClose(router.onNotice((_level, d) => ready && feed.send("change", noticeRow(d))));
  // After each turn, the session's totals as list_sessions has them (total_cost_usd, total_usage).
  feed.onClose(svc.onTotals((id, t) => feed.send("change", { session_id: id, ...t })));
  // The conflict radar (issue 34): a session's overlaps as they appear, on both sessions' rows.
  feed.onClose(
    svc.onOverlap((o) => ready && feed.send("change", { session_id: o.session_id, overlaps: svc.overlapsOf(o.session_id) })),
  );
  const all = await call<api.ListOutput>(svc, router, listSessions, { status_filter: "all" });
  feed.send("snapshot", all.sessions);
  ready = true;
  for (const c of pending) feed.send("change", changeRow(c));
}

export async function sessionFeed(svc: SessionService, id: string, feed: Feed, router?: CallRouter): Promise<void> {
  let cursor: string | undefined;
  let lastScreen = "";
  let status: string | undefined;
  let changedAt = Date.now();
  let busy = false;
  let closed = false;
  const transcript = async () => {
    const r = await call<api.StreamOutput>(svc, router, streamOutputTool, {
      session_id: id,
      mode: "transcript",
      ...(cursor ? { cursor } : {}),
    }).catch(() => undefined);
    if (!r) return;
    cursor = r.cursor ?? cursor;
    if (r.items?.length) feed.send("transcript", r.items);
  };
  const screen = async () => {
    if (status && !isLive(api.status.parse(status))) return;
    const r = await call<api.StreamOutput>(svc, router, streamOutputTool, { session_id: id, mode: "screen" }).catch(
      () => undefined,
    );
    if (r?.text !== undefined && r.text !== lastScreen) {
      lastScreen = r.text;
      feed.send("screen", { text: r.text });
    }
  };
  const tick = async () => {
    if (busy || closed) return;
    busy = true;
    try {
      await screen();
      if (Date.now() - changedAt < TRANSCRIPT_AFTER_CHANGE_MS) await transcript();
    } finally {
      busy = false;
    }
  };
  const changed = (row: Record<string, unknown>) => {
    status = String(row.status);
    changedAt = Date.now();
    feed.send("change", row);
    void tick();
  };
  const off = svc.subscribe((c) => c.session_id === id && changed(changeRow(c)));
  if (router) feed.onClose(router.onNotice((_level, d) => d.session_id === id && changed(noticeRow(d))));
  const timer = setInterval(() => void tick(), SCREEN_EVERY_MS);
  feed.onClose(() => {
    closed = true;
    off();
    clearInterval(timer);
  });
  const all = await call<api.ListOutput>(svc, router, listSessions, { status_filter: "all" });
  const row = all.sessions.find((s) => s.session_id === id);
  if (!row) return feed.send("gone", { session_id: id });
  status = row.status;
  feed.send("session", row);
  await transcript();
  await screen();
}

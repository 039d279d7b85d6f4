/**
 * Resources: every session as session://{id} (its summary as JSON) with /screen, /transcript and /events, the
 * templates for them, and subscriptions. An update is pushed when the session's event log moves (the change feed
 * of SessionService), never by a timer polling a session; screen updates are coalesced to SCREEN_EVERY_MS.
 * Starting or ending a session (or pruning its record) sends notifications/resources/list_changed. On a coordinator
 * the list also names every node's sessions as last known (`… on <node>`), and a node's change is a list change too. A pending screen
 * update is cancelled when its subscription ends; a session whose record is deleted (kill without save_state,
 * retention) loses its subscriptions, and any session the server forgets its pending updates.
 */
import { open } from "node:fs/promises";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { listInput, sessionId, streamInput } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import { isLive, type Status } from "../../core/status.js";
import { rpc } from "./rpc-error.js";
import type { SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";
import type { CallRouter, RemoteSession } from "../tool.js";
import { HANDOFFS_TEMPLATE, readHandoffsResource } from "../../sessions/teams/handoffs.js";

/** A session resources/list names: this machine's (no node) or a node's. */
type Listed = Pick<RemoteSession, "session_id" | "status" | "team_name" | "created_at"> &
  Partial<Pick<RemoteSession, "node" | "reachable">>;

export const RESOURCE_KINDS = ["summary", "screen", "transcript", "events"] as const;
type Kind = (typeof RESOURCE_KINDS)[number];

/** At most this often per subscribed screen. */
export const SCREEN_EVERY_MS = 300;
/** /events shows the last this many lines of the session's event log. */
const EVENT_LINES = 200;
const EVENT_BYTES = 256 * 1024;

export const TEMPLATES = [
  {
    uriTemplate: "session://{session_id}",
    name: "session",
    title: "Session summary",
    description: "The session's summary (status, turns, team, pending permission) as JSON.",
    mimeType: "application/json",
  },
  {
    uriTemplate: "session://{session_id}/screen",
    name: "session-screen",
    title: "Session screen",
    description: "What the session's terminal shows now (live sessions).",
    mimeType: "text/plain",
  },
  {
    uriTemplate: "session://{session_id}/transcript",
    name: "session-transcript",
    title: "Session transcript",
    description: "The conversation: user and assistant messages, as JSON.",
    mimeType: "application/json",
  },
  {
    uriTemplate: "session://{session_id}/events",
    name: "session-events",
    title: "Session events",
    description: `The last ${EVENT_LINES} lines of the session's hook event log (JSON lines).`,
    mimeType: "application/x-ndjson",
  },
];

export function resourceUri(id: string, kind: Kind): string {
  return kind === "summary" ? `session://${id}` : `session://${id}/${kind}`;
}

export function parseUri(uri: string): { id: string; kind: Kind } {
  const m = /^session:\/\/([^/]+)(?:\/(screen|transcript|events))?$/.exec(uri);
  const id = m ? sessionId.safeParse(m[1]) : undefined;
  if (!m || !id?.success) {
    throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(uri.slice(0, 200))} is not a session resource.`, {
      suggestion: "Use session://{session_id}, or …/screen, …/transcript, …/events (resources/templates/list).",
    });
  }
  return { id: id.data, kind: (m[2] as Kind | undefined) ?? "summary" };
}

async function tailFile(path: string): Promise<string> {
  const fh = await open(path, "r").catch(() => undefined);
  if (!fh) return "";
  try {
    const { size } = await fh.stat();
    const from = Math.max(0, size - EVENT_BYTES);
    const buf = Buffer.alloc(size - from);
    await fh.read(buf, 0, buf.length, from);
    const lines = buf.toString("utf8").split("\n").filter(Boolean);
    return lines
      .slice(from > 0 ? 1 : 0)
      .slice(-EVENT_LINES)
      .join("\n");
  } finally {
    await fh.close();
  }
}

export async function readResource(svc: SessionService, uri: string): Promise<{ uri: string; mimeType: string; text: string }> {
  const { id, kind } = parseUri(uri);
  const mimeType = TEMPLATES[RESOURCE_KINDS.indexOf(kind)]!.mimeType;
  if (kind === "summary") {
    const res = await svc.list(listInput.parse({ status_filter: "all" }));
    const s = res.sessions.find((x) => x.session_id === id);
    if (!s) throw new SessionError("SESSION_NOT_FOUND", `no session with id ${JSON.stringify(id)}.`);
    return { uri, mimeType, text: JSON.stringify(s, null, 2) };
  }
  if (kind === "events") {
    await svc.deps.registry.record(id); // SESSION_NOT_FOUND for an unknown id
    return { uri, mimeType, text: await tailFile(svc.deps.registry.paths(id).eventsPath) };
  }
  const out = await svc.stream(
    streamInput.parse({ session_id: id, mode: kind, ...(kind === "transcript" ? { lines: 200 } : {}) }),
  );
  return { uri, mimeType, text: kind === "screen" ? (out.text ?? "") : JSON.stringify(out.items ?? [], null, 2) };
}

/** What installResources gives back: the stop, and a subscription made for the client (start_session {stream_output}). */
export interface InstalledResources {
  stop: () => void;
  subscribe: (uri: string) => Promise<void>;
  /** Subscriptions held and screen updates pending (tests: none is left behind). */
  readonly kept: { subscriptions: number; timers: number };
}

/** Installs the resource handlers on `server` and starts pushing updates and list changes. */
export function installResources(server: Server, svc: SessionService, log: Logger, router?: CallRouter): InstalledResources {
  const subscribed = new Set<string>();
  const screenTimers = new Map<string, NodeJS.Timeout>();
  const updated = (uri: string) =>
    void server.sendResourceUpdated({ uri }).catch((e: unknown) => log.debug(`resource update not sent: ${String(e)}`));
  const cancel = (uri: string) => {
    const t = screenTimers.get(uri);
    if (t) clearTimeout(t);
    screenTimers.delete(uri);
  };
  const unsubscribe = (uri: string) => {
    subscribed.delete(uri);
    cancel(uri);
  };

  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    rpc(async () => ({ resourceTemplates: [...TEMPLATES, HANDOFFS_TEMPLATE] })),
  );
  server.setRequestHandler(
    ListResourcesRequestSchema,
    rpc(async () => {
      const st = await svc.deps.store.read();
      // This machine's sessions, then (on a coordinator) every node's as last listed: no node is asked here.
      const rows: Listed[] = Object.values(st.sessions)
        .filter((r) => !r.incoming)
        .map((r) => ({
          session_id: r.session_id,
          status: r.status,
          created_at: r.created_at,
          ...(r.team_name ? { team_name: r.team_name } : {}),
        }));
      for (const r of router?.knownSessions?.() ?? []) if (!st.sessions[r.session_id]) rows.push(r);
      const resources: Resource[] = [];
      for (const r of rows.sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""))) {
        const label = `${r.session_id}${r.team_name ? ` (${r.team_name})` : ""}${r.node ? ` on ${r.node}` : ""}`;
        const note =
          r.node && !r.reachable
            ? {
                description: `Node ${r.node} does not answer now: its last known state (${r.status}); reading fails with NODE_UNREACHABLE until it is back.`,
              }
            : {};
        for (const [i, kind] of RESOURCE_KINDS.entries()) {
          if (kind === "screen" && !isLive(r.status as Status)) continue;
          const t = TEMPLATES[i]!;
          resources.push({
            uri: resourceUri(r.session_id, kind),
            name: `${t.name} ${label}`,
            title: `${t.title}: ${label}`,
            ...note,
            mimeType: t.mimeType,
          });
        }
      }
      return { resources };
    }),
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    rpc(async (req) => {
      // A team's hand-offs (member servers' handoff tool): this state directory's file.
      if (req.params.uri.startsWith("team://"))
        return { contents: [await readHandoffsResource(svc.deps.cfg.stateDir, req.params.uri)] };
      // A session on a node: the node's own resource, read through its link.
      const remote = router?.readResource
        ? await router.readResource(req.params.uri, parseUri(req.params.uri).id, svc)
        : undefined;
      return { contents: remote ?? [await readResource(svc, req.params.uri)] };
    }),
  );
  const subscribe = async (uri: string) => {
    const { id } = parseUri(uri);
    // A session on a node: its updates come from the node's own resource (through the link).
    await router?.subscribeResource?.(uri, id, svc);
    subscribed.add(uri);
  };
  server.setRequestHandler(
    SubscribeRequestSchema,
    rpc(async (req) => {
      await subscribe(req.params.uri);
      return {};
    }),
  );
  const offRemote = router?.onResourceUpdated?.((uri) => subscribed.has(uri) && updated(uri));
  // A node's session started or ended (the node said so, or the coordinator listed it): the list changed.
  const offRemoteList = router?.onSessionsChanged?.(() => void server.sendResourceListChanged().catch(() => {}));
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    rpc(async (req) => {
      unsubscribe(req.params.uri);
      return {};
    }),
  );
  // A session the server forgets has no update pending; one whose record is gone has no subscriptions either.
  const offForget = svc.onForget((id, removed) => {
    for (const kind of RESOURCE_KINDS) {
      const uri = resourceUri(id, kind);
      if (removed) unsubscribe(uri);
      else cancel(uri);
    }
  });

  const off = svc.subscribe((c) => {
    const started = c.status === "starting" && c.previous !== "starting";
    const ended = c.previous !== undefined && isLive(c.previous) && !isLive(c.status);
    if (started || ended) void server.sendResourceListChanged().catch(() => {});
    if (!subscribed.size) return;
    for (const kind of RESOURCE_KINDS) {
      const uri = resourceUri(c.session_id, kind);
      if (!subscribed.has(uri)) continue;
      if (kind !== "screen") {
        updated(uri);
        continue;
      }
      // A burst of events is one screen update; the timer exists only while an update is pending.
      if (screenTimers.has(uri)) continue;
      screenTimers.set(
        uri,
        setTimeout(() => {
          screenTimers.delete(uri);
          if (subscribed.has(uri)) updated(uri);
        }, SCREEN_EVERY_MS),
      );
    }
  });
  const offLimit = svc.onLimit((_id, kind) => {
    if (kind === "retention") void server.sendResourceListChanged().catch(() => {});
  });
  const stop = () => {
    off();
    offLimit();
    offForget();
    offRemote?.();
    offRemoteList?.();
    for (const t of screenTimers.values()) clearTimeout(t);
    screenTimers.clear();
    subscribed.clear();
  };
  return {
    stop,
    subscribe,
    get kept() {
      return { subscriptions: subscribed.size, timers: screenTimers.size };
    },
  };
}

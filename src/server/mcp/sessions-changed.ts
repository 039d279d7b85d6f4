/**
 * The push a coordinator's listing is served from (issue 36): a client that declares the experimental capability
 * SESSIONS_CHANGED_CAP (a coordinator's link to this node, src/nodes/link.ts) is sent SESSIONS_CHANGED once after a
 * change of any session's row — a folded event (status, turns, usage, a pending prompt), a start, an end, a record
 * removed, a time limit, a turn's late usage, an overlap — and then not again until it calls list_sessions: the
 * coordinator keeps this node's rows and lists it again only after such a push. Sent as the change is folded, so it
 * is on the wire before any result or notice that comes of the same change; a change another server process of this
 * state directory made is pushed when state.json is rewritten. Other clients are sent nothing.
 */
import { watch } from "node:fs";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";

/** The experimental capability both sides declare (the node in its initialize result, the coordinator in its request). */
export const SESSIONS_CHANGED_CAP = "claude-sessions/sessions_changed";
/** The notification's method (no params). */
export const SESSIONS_CHANGED = "notifications/claude-sessions/sessions_changed";

/** Not one of MCP's own notifications (the SDK's `notification()` is typed for those): sent on the transport itself. */
const PUSH = { jsonrpc: "2.0", method: SESSIONS_CHANGED } as const;

export interface SessionsChanged {
  /** The client called list_sessions: the next change is pushed again. */
  listed(): void;
  stop(): void;
}

/** `nodes`: this server's own nodes' row changes (a coordinator that is itself a node passes them on). */
export function startSessionsChanged(
  server: Server,
  svc: SessionService,
  log: Logger,
  nodes?: (l: () => void) => () => void,
): SessionsChanged {
  // Armed until the first push; a listing arms it again (before it reads anything, so no change falls between).
  let armed = true;
  const push = () => {
    if (!armed || server.getClientCapabilities()?.experimental?.[SESSIONS_CHANGED_CAP] === undefined) return;
    armed = false;
    const sent = server.transport ? server.transport.send(PUSH) : Promise.reject(new Error("not connected"));
    void sent.catch((e: unknown) => {
      armed = true;
      log.debug(`${SESSIONS_CHANGED} not sent: ${String(e)}`);
    });
  };
  // Listens only for a client that declared the capability (a coordinator): every other client (one server per
  // HTTP client) adds no listener. Its capabilities are known once it has initialized, which on a stdio start may
  // be before this runs (cli/serve-early.ts).
  let offs: Array<() => void> = [];
  let stopped = false;
  const listen = () => {
    if (stopped || offs.length || server.getClientCapabilities()?.experimental?.[SESSIONS_CHANGED_CAP] === undefined) return;
    offs = [svc.subscribe(push), svc.onForget(push), svc.onLimit(push), svc.onTurnUsage(push), svc.onOverlap(push)];
    if (nodes) offs.push(nodes(push));
    // What another server of this machine's state directory changed (each coordinator's link, the node's own CLI, a
    // move's import): this process follows none of it, but every such change rewrites state.json.
    try {
      const w = watch(svc.deps.cfg.stateDir, (_event, name) => {
        if (name === "state.json") push();
      });
      w.on("error", (e) => log.debug(`watching the state directory for ${SESSIONS_CHANGED}: ${String(e)}`));
      offs.push(() => w.close());
    } catch (e) {
      log.debug(`watching the state directory for ${SESSIONS_CHANGED}: ${String(e)}`);
    }
  };
  listen();
  const before = server.oninitialized;
  server.oninitialized = () => {
    before?.();
    listen();
  };
  return {
    listed: () => void (armed = true),
    stop: () => {
      stopped = true;
      offs.forEach((off) => off());
      offs = [];
    },
  };
}

/**
 * Room on each machine, as a coordinator sees it (issue 36): what `node: "auto"` and wake_anywhere (wake.ts) place by.
 * A machine's room is what its health_check says — its live sessions, MAX_CONCURRENT_SESSIONS and, when set,
 * CLAUDE_SESSIONS_MAX_LIVE — not taken as it is (a node is not trusted): its live sessions are at least those a fresh
 * listing of it shows (plus the sessions this coordinator has just moved there to wake, not live yet), its limits at
 * most NODE_SLOTS_MAX. A node that does not answer both in time is left out.
 */
import { isLive, type Status } from "../core/status.js";
import type { SessionService } from "../sessions/service.js";
import type { Coordinator } from "./coordinator.js";
import { NODE_ANSWER_MS } from "./link.js";
import { LOCAL } from "./router.js";

type Args = Record<string, unknown>;

/** A machine's room: `maxLive` 0 when it has no MAX_LIVE. */
export interface Room {
  name: string;
  live: number;
  max: number;
  maxLive: number;
}

/**
 * Free slots and memory from a node's health_check ("N live of M", "X MiB available"), as the node says; `maxLive`
 * when it has CLAUDE_SESSIONS_MAX_LIVE set ("CLAUDE_SESSIONS_MAX_LIVE N"; a node of an older version does not say).
 */
export function capacityOf(h: Args): { free: number; mem: number; live: number; max: number; maxLive?: number } | undefined {
  const checks = Array.isArray(h.checks) ? (h.checks as Array<{ name?: unknown; detail?: unknown }>) : [];
  const detail = (name: string) => {
    const d = checks.find((c) => c?.name === name)?.detail;
    return typeof d === "string" ? d : "";
  };
  const s = /(\d{1,9}) live of (\d{1,9})/.exec(detail("sessions"));
  if (!s) return undefined;
  const m = /(\d{1,12}) MiB available/.exec(detail("memory"));
  const live = Number(s[1]);
  const max = Number(s[2]);
  const l = /CLAUDE_SESSIONS_MAX_LIVE (\d{1,9})/.exec(detail("sessions"));
  return { free: max - live, mem: m ? Number(m[1]) : 0, live, max, ...(l ? { maxLive: Number(l[1]) } : {}) };
}

/** A node is taken to have at most this many slots for `auto`, whatever it says. */
export const NODE_SLOTS_MAX = 100;
/** … and at most this much free memory (1 TiB). */
export const NODE_MEM_MAX_MIB = 1024 * 1024;

/** A node's capacity for `auto`: its claim checked against the live sessions this coordinator sees on it, and capped. */
export function verifiedCapacity(h: Args, seenLive: number): { free: number; mem: number } | undefined {
  const c = capacityOf(h);
  if (!c) return undefined;
  return { free: Math.min(c.max, NODE_SLOTS_MAX) - Math.max(c.live, seenLive), mem: Math.min(c.mem, NODE_MEM_MAX_MIB) };
}

/** A node's room from its health_check, its live count raised to `seenLive`, its limits capped. */
export function verifiedRoom(name: string, h: Args, seenLive: number): Room | undefined {
  const c = capacityOf(h);
  if (!c) return undefined;
  return {
    name,
    live: Math.max(c.live, seenLive),
    max: Math.min(c.max, NODE_SLOTS_MAX),
    maxLive: c.maxLive ? Math.min(c.maxLive, NODE_SLOTS_MAX) : 0,
  };
}

/** Whether one more live session fits on the machine without its MAX_LIVE hibernating one (or its slots refusing it). */
export function hasRoom(r: Room): boolean {
  return r.live < r.max && (r.maxLive <= 0 || r.live < r.maxLive);
}

/** The machine with the most room (not `except`): one with room, then the fewest live; the first listed on a tie. */
export function mostRoom(rooms: readonly Room[], except?: string): Room | undefined {
  let best: Room | undefined;
  for (const r of rooms) if (r.name !== except && hasRoom(r) && (!best || r.live < best.live)) best = r;
  return best;
}

/** Per coordinator: sessions it moved to a machine to wake there (id → machine), counted live there until they are. */
const arriving = new WeakMap<Coordinator, Map<string, string>>();

export function arrivingOf(c: Coordinator): Map<string, string> {
  let m = arriving.get(c);
  if (!m) arriving.set(c, (m = new Map()));
  return m;
}

/** Every reachable machine's room, this one first, then the nodes in nodes.json's order. */
export async function roomsOf(c: Coordinator, svc: SessionService): Promise<Room[]> {
  const coming = arrivingOf(c);
  const plus = (name: string, liveIds: readonly string[]) =>
    [...coming].filter(([id, n]) => n === name && !liveIds.includes(id)).length;
  const st = await svc.deps.store.read();
  const here = Object.values(st.sessions)
    .filter((r) => !r.incoming && isLive(svc.deps.registry.followed(r.session_id)?.fold.status ?? r.status))
    .map((r) => r.session_id);
  const cfg = svc.deps.cfg;
  const local: Room = { name: LOCAL, live: here.length + plus(LOCAL, here), max: cfg.maxSessions, maxLive: cfg.maxLive };
  const nodes = await Promise.all(
    [...c.links.values()].map(async (l): Promise<Room | undefined> => {
      if (l.status !== "reachable") return undefined;
      const [h, rows] = await Promise.all([
        l.call("health_check", {}, {}, NODE_ANSWER_MS).catch(() => undefined),
        c.router.refresh(l.name).catch(() => undefined),
      ]);
      if (!h || !rows) return undefined;
      const liveIds = rows.filter((r) => isLive(r.status as Status)).map((r) => r.session_id);
      const room = verifiedRoom(l.name, h, liveIds.length);
      return room && { ...room, live: room.live + plus(l.name, liveIds) };
    }),
  );
  return [local, ...nodes.filter((r): r is Room => r !== undefined)];
}

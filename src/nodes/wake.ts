/**
 * wake_anywhere (issue 36, CLAUDE_SESSIONS_WAKE_ANYWHERE on the coordinator): a prompt to a hibernated session whose
 * machine is full (its CLAUDE_SESSIONS_MAX_LIVE reached, or MAX_CONCURRENT_SESSIONS) first moves the session to the
 * machine with the most room (room.ts) — move_session's two-phase move over the links (move.ts): the same session
 * id, its conversation carried, removed from the old machine — and the prompt then wakes it there. So the live limit
 * is the fleet's, not one machine's. It wakes where it is (its machine makes room as it always did: its least recently
 * used idle session is hibernated) when its machine has room, no other machine has, it runs in a worktree (a move
 * never carries one), or the move is refused or fails (the move leaves it on its machine).
 */
import type { CallContext } from "../core/context.js";
import { isLive, type Status } from "../core/status.js";
import type { SessionService } from "../sessions/service.js";
import type { Coordinator } from "./coordinator.js";
import { moveSession } from "./move.js";
import { arrivingOf, hasRoom, mostRoom, roomsOf } from "./room.js";
import { LOCAL } from "./router.js";

/** Per coordinator: one placement at a time, so two wakes never both take the last slot of one machine. */
const turns = new WeakMap<Coordinator, Promise<void>>();

const NOTHING = (): void => {};

/** The status of a session as this coordinator last knew it (no call), and whether it runs in a worktree. */
async function lastKnown(
  c: Coordinator,
  svc: SessionService,
  owner: string,
  id: string,
): Promise<{ status: string; worktree: boolean } | undefined> {
  if (owner === LOCAL) {
    const r = await svc.deps.store.get(id);
    if (!r || r.incoming) return undefined;
    return { status: svc.deps.registry.followed(id)?.fold.status ?? r.status, worktree: r.worktree !== undefined };
  }
  const row = c.router.lastRows(owner).find((r) => r.session_id === id);
  // A list row names a branch only for a session in a worktree this server made.
  return row && { status: String(row.status), worktree: typeof row.branch === "string" };
}

/**
 * Before a call that wakes session `id` goes to its machine: moves it to the machine with the most room when it is
 * hibernated and its own machine is full. Returns what to call once the call is over (the arriving session is then
 * counted by its machine's own figures). Never throws for the placement: a session it cannot move wakes where it is.
 */
export async function wakeAnywhere(c: Coordinator, svc: SessionService, id: string, ctx: CallContext): Promise<() => void> {
  // The cheap look first (the last known rows, kept current by the nodes' notices): a live session is just sent to.
  const seen = await lastKnown(c, svc, await c.targetOf(svc, { session_id: id }), id);
  if (seen && (isLive(seen.status as Status) || seen.worktree)) return NOTHING;
  const before = turns.get(c) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((r) => (done = r));
  turns.set(
    c,
    before.then(() => mine),
  );
  await before;
  try {
    // Every machine listed again (roomsOf), so where the session is and its status are fresh.
    const rooms = await roomsOf(c, svc);
    const owner = await c.targetOf(svc, { session_id: id });
    const now = await lastKnown(c, svc, owner, id);
    if (!now || now.status !== "hibernated" || now.worktree) return NOTHING;
    const at = rooms.find((r) => r.name === owner);
    if (!at || hasRoom(at)) return NOTHING;
    const dest = mostRoom(rooms, owner);
    const where = (n: string) => (n === LOCAL ? "this machine" : `node ${n}`);
    if (!dest) {
      c.log.info(`wake_anywhere: ${id}: ${where(owner)} is full and no other machine has room; it wakes there`);
      return NOTHING;
    }
    try {
      await moveSession(c, svc, { session_id: id, node: dest.name }, ctx);
    } catch (e) {
      c.log.warn(`wake_anywhere: ${id} stays on ${where(owner)} (its move to ${where(dest.name)} failed: ${String(e)})`);
      return NOTHING;
    }
    c.log.info(`wake_anywhere: ${id} moved from ${where(owner)} (full) to ${where(dest.name)} to wake there`);
    const coming = arrivingOf(c);
    coming.set(id, dest.name);
    return () => {
      if (coming.get(id) === dest.name) coming.delete(id);
    };
  } finally {
    done();
  }
}

/**
 * Room under CLAUDE_SESSIONS_MAX_LIVE: a start, resume or wake waits for room for one more live process, made by
 * ending a warm-pool spare or hibernating the least recently used idle session (sleep.ts).
 */
import { isLive, type Status } from "../../core/status.js";
import type { SessionRecord } from "../../store/schema.js";
import { serverAction } from "../audit.js";
import type { Deps } from "../deps.js";
import { kill } from "./kill.js";
import { canHibernate, hibernate } from "./sleep.js";

/** The status a session has now: this server's fold when it follows it, else the stored record's. */
function statusOf(d: Deps, id: string, stored: Status): Status {
  return d.registry.followed(id)?.fold.status ?? stored;
}

/** Per service: one room decision at a time, and the starts that were given room but may not be live yet. */
const rooms = new WeakMap<Deps, { turn: Promise<void>; reserved: number }>();

/**
 * CLAUDE_SESSIONS_MAX_LIVE: runs `fn` (a start, resume or wake) once there is room for one more live process:
 * while the live processes (and the starts given room and still under way) would pass the limit, the least
 * recently used idle session (not `except`) is hibernated. Room decisions are taken one at a time. Sessions in a
 * turn, at a permission request or blocked are never chosen; when none can go the start goes ahead over the limit
 * (logged), rather than fail a prompt.
 */
export async function withRoom<T>(d: Deps, except: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (d.cfg.maxLive <= 0) return fn();
  let r = rooms.get(d);
  if (!r) rooms.set(d, (r = { turn: Promise.resolve(), reserved: 0 }));
  const room = r;
  const before = room.turn;
  let done!: () => void;
  room.turn = new Promise<void>((res) => (done = res));
  try {
    await before;
    await makeRoom(d, except, room.reserved);
    room.reserved += 1;
  } finally {
    done();
  }
  try {
    return await fn();
  } finally {
    room.reserved -= 1;
  }
}

async function makeRoom(d: Deps, except: string | undefined, reserved: number): Promise<void> {
  const max = d.cfg.maxLive;
  const tried = new Set<string>();
  for (;;) {
    const live = (await liveRecords(d)).filter((r) => r.session_id !== except);
    if (live.length + reserved < max) return;
    // A warm-pool spare goes first: it holds no conversation, and a later start costs less than a wake.
    const spare = live.find((r) => r.spare !== undefined && !tried.has(r.session_id));
    if (spare) {
      tried.add(spare.session_id);
      const claimed = await d.store.update((s) => {
        const x = s.sessions[spare.session_id];
        if (x?.spare === undefined) return false;
        delete x.spare;
        return true;
      });
      if (claimed) {
        await serverAction(d, "max_live", "kill_session", spare.session_id, () =>
          kill(
            d,
            { session_id: spare.session_id, save_state: false, force: false },
            `CLAUDE_SESSIONS_MAX_LIVE (${max}) reached: a warm-pool spare made room`,
          ),
        ).catch((e: unknown) => d.log.warn(`${spare.session_id}: ending a spare for room failed: ${String(e)}`));
      }
      continue;
    }
    const idle = live
      .filter((r) => !tried.has(r.session_id) && r.spare === undefined && d.runners[r.backend])
      .filter((r) => canHibernate(d.registry.followed(r.session_id)?.fold ?? r))
      .sort((a, b) => (a.last_active ?? a.created_at).localeCompare(b.last_active ?? b.created_at));
    const pick = idle[0];
    if (!pick) {
      d.log.warn(
        `${live.length} live sessions and CLAUDE_SESSIONS_MAX_LIVE is ${max}, but none is idle: starting over the limit`,
      );
      return;
    }
    tried.add(pick.session_id);
    await serverAction(d, "max_live", "kill_session", pick.session_id, () =>
      hibernate(d, pick.session_id, `CLAUDE_SESSIONS_MAX_LIVE (${max}) reached`),
    ).catch((e: unknown) => d.log.warn(`${pick.session_id}: hibernating for room failed: ${String(e)}`));
  }
}

/**
 * Whether one more live process fits under CLAUDE_SESSIONS_MAX_LIVE without hibernating anything (always, when the
 * limit is off), counting `underWay` starts not yet recorded (conservatively: a recorded one counts twice): the warm
 * pool starts a spare only then — a spare never pushes a conversation out.
 */
export async function hasRoom(d: Deps, underWay = 0): Promise<boolean> {
  if (d.cfg.maxLive <= 0) return true;
  return (await liveRecords(d)).length + underWay + (rooms.get(d)?.reserved ?? 0) < d.cfg.maxLive;
}

/** The stored sessions whose process is live, by this server's fold where it follows them. */
async function liveRecords(d: Deps): Promise<SessionRecord[]> {
  return Object.values((await d.store.read()).sessions).filter((r) => isLive(statusOf(d, r.session_id, r.status)));
}

/**
 * Reconciliation of the records with what really runs: at start-up (adopt the live sessions an earlier server
 * left, mark the vanished ones dead) and in the background when a read noticed a record that claims to run in a
 * terminal that is gone. Reads never write; this is where such writes happen.
 */
import { stat } from "node:fs/promises";
import type { Liveness } from "../../runners/host.js";
import type { BackendKind } from "../../core/events.js";
import { isLive } from "../../core/status.js";
import type { SessionRecord } from "../../store/schema.js";
import type { Deps } from "../deps.js";
import { armDeadline } from "../life/limits.js";
import { generationOf } from "../registry.js";
import { markHibernated } from "../life/sleep.js";
import { applyFold } from "../views.js";

/** Liveness of every session of every backend whose sessions outlive servers: one call per backend. */
export async function survivingLiveness(
  d: Deps,
  records: Iterable<SessionRecord>,
): Promise<Map<BackendKind, Map<string, Liveness>>> {
  const out = new Map<BackendKind, Map<string, Liveness>>();
  const kinds = new Set<BackendKind>();
  for (const r of records) if (!r.killed_at) kinds.add(r.backend);
  for (const k of kinds) {
    const b = d.runners[k]?.host;
    if (b?.survivesRestart) out.set(k, await b.list().catch(() => new Map<string, Liveness>()));
  }
  return out;
}

/** What start-up reconciliation did. */
export interface Adoption {
  adopted: string[];
  dead: string[];
  hibernated: string[];
}

/** Past the start time-out, a start still under way has failed anyway: its starting server records it so. */
const START_MARGIN_MS = 1_000;

/**
 * Adopts live sessions left by an earlier server and marks the vanished ones dead. A session another server is
 * starting right now (its fold `starting`, its events log written within the start time-out: a start or a wake
 * whose terminal may not exist yet) is left alone, and looked at again once that time is over.
 */
export async function adopt(d: Deps): Promise<Adoption> {
  const state = await d.store.read();
  const records = Object.values(state.sessions).filter((r) => isLive(r.status));
  const out: Adoption = { adopted: [], dead: [], hibernated: [] };
  const young = await reconcile(d, records, out, true);
  await d.registry.flushed();
  if (out.adopted.length || out.dead.length || out.hibernated.length)
    d.log.info(
      `adopted ${out.adopted.length} live session(s), marked ${out.dead.length} dead and ${out.hibernated.length} hibernated`,
    );
  if (young.length) {
    d.log.info(`${young.length} session(s) starting elsewhere: looked at again in ${d.cfg.startTimeoutMs + START_MARGIN_MS} ms`);
    setTimeout(() => void again(d, young), d.cfg.startTimeoutMs + START_MARGIN_MS).unref();
  }
  return out;
}

async function again(d: Deps, ids: string[]): Promise<void> {
  try {
    const state = await d.store.read();
    const records = ids.map((id) => state.sessions[id]).filter((r): r is SessionRecord => r !== undefined && isLive(r.status));
    const out: Adoption = { adopted: [], dead: [], hibernated: [] };
    await reconcile(d, records, out, false);
    await d.registry.flushed();
    if (out.dead.length) d.log.info(`marked ${out.dead.length} session(s) dead whose start never finished`);
  } catch (e) {
    d.log.warn(`reconciling ${ids.join(", ")} again: ${String(e)}`);
  }
}

/** Reconciles each record with what runs; returns the ids left alone because they are starting right now. */
async function reconcile(d: Deps, records: SessionRecord[], out: Adoption, spareYoung: boolean): Promise<string[]> {
  const live = await survivingLiveness(d, records);
  const young: string[] = [];
  for (const r of records) {
    const b = d.runners[r.backend]?.host;
    // Its backend is not available to this server (tmux missing): nothing can be said of it; leave it alone.
    if (!b) continue;
    const l = live.get(r.backend)?.get(r.session_id);
    if (b.survivesRestart && l?.exists && l.alive) {
      await d.registry.follow(r.session_id);
      out.adopted.push(r.session_id);
      armDeadline(d, r);
      continue;
    }
    if (spareYoung && (await startingNow(d, r))) {
      young.push(r.session_id);
      continue;
    }
    if (b.survivesRestart && l?.exists) {
      const s = await d.registry.follow(r.session_id);
      if (isLive(s.fold.status))
        await d.registry.emit(r.session_id, {
          hook_event_name: "cs:exit",
          ...(l.exitCode !== undefined ? { exit_code: l.exitCode } : {}),
          ...generationOf(s.fold),
        });
      out.adopted.push(r.session_id);
      armDeadline(d, r);
      continue;
    }
    if (!b.owns(r.host)) continue; // another live server holds it
    // A pty or headless session whose server was killed (no clean shutdown hibernated it): with a conversation it
    // is hibernated, so the next prompt resumes it; without one there is nothing to come back to.
    if (!b.survivesRestart && (await hadConversation(d, r))) {
      await markHibernated(d, r.session_id).then(
        () => out.hibernated.push(r.session_id),
        async (e: unknown) => {
          d.log.warn(`${r.session_id}: recording it hibernated failed (${String(e)}); marking it dead`);
          await markVanished(d, r);
          out.dead.push(r.session_id);
        },
      );
      continue;
    }
    await markVanished(d, r);
    out.dead.push(r.session_id);
  }
  return young;
}

/** Being started by some server right now: its fold says starting and its events log was written within the start time-out. */
async function startingNow(d: Deps, r: SessionRecord): Promise<boolean> {
  // Looked at before it is followed (following makes the log of a record whose directory was never made).
  const at = await stat(d.registry.paths(r.session_id).eventsPath).then(
    (st) => st.mtimeMs,
    () => 0,
  );
  if (Date.now() - at >= d.cfg.startTimeoutMs + START_MARGIN_MS) return false;
  return (await d.registry.follow(r.session_id)).fold.status === "starting";
}

/** The session took a prompt (its fold says so), and was not a warm-pool spare. */
async function hadConversation(d: Deps, r: SessionRecord): Promise<boolean> {
  if (r.spare !== undefined) return false;
  const s = await d.registry.follow(r.session_id);
  return s.fold.prompts_submitted > 0 && s.fold.status !== "starting";
}

/**
 * Records a session whose terminal is gone as dead. The exit carries the generation of the record that was
 * judged: if a resume has started a new process since, the reducer ignores it and the record is left alone.
 */
export async function markVanished(d: Deps, r: SessionRecord): Promise<void> {
  const s = await d.registry.follow(r.session_id);
  await d.registry
    .emit(r.session_id, {
      hook_event_name: "cs:exit",
      ...(r.generation !== undefined ? { generation: r.generation } : generationOf(s.fold)),
    })
    .catch(() => {});
  await d.registry.flushed();
  await d.store.patch(r.session_id, (rec) => {
    if (rec.generation !== r.generation) return;
    applyFold(rec, s.fold);
    rec.status = "dead";
    delete rec.pid;
  });
}

/**
 * Records as dead the sessions a read found missing from their terminal server (checked again first: the read
 * may have raced a start). Runs in the background, once per session at a time.
 */
export class Reconciler {
  private readonly pending = new Set<string>();

  constructor(private readonly d: Deps) {}

  notice(ids: string[]): void {
    const fresh = ids.filter((id) => !this.pending.has(id));
    if (!fresh.length) return;
    for (const id of fresh) this.pending.add(id);
    setImmediate(() => void this.run(fresh));
  }

  private async run(ids: string[]): Promise<void> {
    try {
      const state = await this.d.store.read();
      const records = ids
        .map((id) => state.sessions[id])
        .filter((r): r is SessionRecord => r !== undefined && isLive(r.status) && r.status !== "starting");
      const live = await survivingLiveness(this.d, records);
      for (const r of records) {
        const terminals = live.get(r.backend);
        if (terminals && !terminals.get(r.session_id)?.exists) await markVanished(this.d, r);
      }
    } catch (e) {
      this.d.log.warn(`reconciling ${ids.join(", ")}: ${String(e)}`);
    } finally {
      for (const id of ids) this.pending.delete(id);
    }
  }
}

/**
 * No screen stalls a session silently (issue 20). While a followed session's turn runs (busy) or a screen holds it
 * (blocked), one timer per session asks its driver to look once the turn has been quiet (no event) for a moment:
 * a screen that waits for an answer becomes `blocked` (cs:blocked, so every server replays it), and its going
 * `busy` again. Armed and cleared by the change feed, like the time limits; a session at rest costs nothing, and a
 * turn whose hooks keep firing is never looked at. Headless drivers look at nothing (they have no screen).
 */
import { BLOCKED_PROBE_MS, BLOCKED_QUIET_MS } from "../runners/terminal/blocking.js";
import type { Status } from "../core/status.js";
import type { Deps } from "./deps.js";

export class ScreenWatch {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly lastEvent = new Map<string, number>();
  private readonly looking = new Set<string>();

  constructor(
    private readonly d: Deps,
    private readonly everyMs = BLOCKED_PROBE_MS,
    private readonly quietMs = BLOCKED_QUIET_MS,
  ) {}

  /** Called for every batch of a followed session's events. */
  changed(id: string, status: Status): void {
    this.lastEvent.set(id, Date.now());
    if (status !== "busy" && status !== "blocked") {
      this.clear(id);
      return;
    }
    if (this.timers.has(id)) return;
    const t = setInterval(() => void this.look(id), this.everyMs);
    t.unref();
    this.timers.set(id, t);
  }

  private async look(id: string): Promise<void> {
    const s = this.d.registry.followed(id);
    const st = s?.fold.status;
    if (!s || (st !== "busy" && st !== "blocked")) return this.clear(id);
    const quiet = Date.now() - (this.lastEvent.get(id) ?? Date.now());
    if (this.looking.has(id) || (st === "busy" && quiet < this.quietMs)) return;
    this.looking.add(id);
    try {
      const r = await this.d.store.get(id);
      const driver = r ? this.d.runners[r.backend]?.driver : undefined;
      if (!driver) return;
      const h = await this.d.registry.handle(id);
      await driver.probe(h, { quietMs: quiet, unknownAfterMs: this.d.cfg.unknownScreenMs });
    } catch (e) {
      this.d.log.debug(`${id}: screen probe failed: ${String(e)}`);
    } finally {
      this.looking.delete(id);
    }
  }

  clear(id: string): void {
    const t = this.timers.get(id);
    if (t) clearInterval(t);
    this.timers.delete(id);
    this.lastEvent.delete(id);
  }

  /** Sessions watched right now (health and tests). */
  get size(): number {
    return this.timers.size;
  }

  /** Entries kept, per map (tests). */
  get sizes(): Record<string, number> {
    return { timers: this.timers.size, lastEvent: this.lastEvent.size, looking: this.looking.size };
  }

  clearAll(): void {
    for (const id of [...this.timers.keys()]) this.clear(id);
  }
}

/**
 * No screen stalls a session silently (issue 20). While a followed session's turn runs (busy) or a screen holds it
 * (blocked), one timer per session asks its driver to look once the turn has been quiet (no event) for a moment:
 * a screen that waits for an answer becomes `blocked` (cs:blocked, so every server replays it), and its going
 * `busy` again. Armed and cleared by the change feed, like the time limits; a session at rest costs nothing, and a
 * turn whose hooks keep firing is never looked at. Headless drivers look at nothing (they have no screen).
 * The timer and its bookkeeping live on the session object (session.ts), dropped with it.
 */
import type { Status } from "../../core/status.js";
import type { Deps } from "../deps.js";
import type { Session } from "../session.js";

/** How often a quiet turn's screen is read for a blocking screen (the "can't check" screen shows within this + one read). */
const BLOCKED_PROBE_MS = 1000;
/** A turn is "quiet" when no hook fired for this long: only then is its screen read. */
const BLOCKED_QUIET_MS = 800;

export class ScreenWatch {
  constructor(
    private readonly d: Deps,
    private readonly everyMs = BLOCKED_PROBE_MS,
    private readonly quietMs = BLOCKED_QUIET_MS,
  ) {}

  /** Called for every batch of a followed session's events. */
  changed(x: Session, status: Status): void {
    x.screen.lastEvent = Date.now();
    if (status !== "busy" && status !== "blocked") {
      x.clearScreenWatch();
      return;
    }
    if (x.screen.timer) return;
    const t = setInterval(() => void this.look(x), this.everyMs);
    t.unref();
    x.screen.timer = t;
  }

  private async look(x: Session): Promise<void> {
    const id = x.id;
    const s = this.d.registry.session(id) === x ? x.live : undefined;
    const st = s?.fold.status;
    if (!s || (st !== "busy" && st !== "blocked")) return x.clearScreenWatch();
    const quiet = Date.now() - (x.screen.lastEvent ?? Date.now());
    if (x.screen.looking || (st === "busy" && quiet < this.quietMs)) return;
    x.screen.looking = true;
    try {
      const r = await this.d.store.get(id);
      const driver = r ? this.d.runners[r.backend]?.driver : undefined;
      if (!driver) return;
      const h = await this.d.registry.handle(id);
      await driver.probe(h, { quietMs: quiet, unknownAfterMs: this.d.cfg.unknownScreenMs });
    } catch (e) {
      this.d.log.debug(`${id}: screen probe failed: ${String(e)}`);
    } finally {
      x.screen.looking = false;
    }
  }

  clearAll(): void {
    for (const x of this.d.registry.all()) x.clearScreenWatch();
  }
}

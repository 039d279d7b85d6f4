/**
 * A budget binds inside a turn too. A headless session's turn is stopped by the Agent SDK at its max_budget_usd;
 * a tmux or pty session's turn has no such stop in the CLI, so while a budgeted one is busy the server reads its
 * transcript as the lines land (woken by the write, at least once a second): the session's counted cost plus the
 * turn's lines not yet counted, and a pool's (pool.ts) likewise. Once that reaches the budget the turn is interrupted
 * through the session's own interrupt (Esc), an audit line with actor `server:budget` and a line in the record's
 * error log say why, and the next prompt gets LIMIT_REACHED. One loop per busy session, armed by the change feed.
 */
import { dirname } from "node:path";
import { transcriptPath } from "../../claude/transcript.js";
import { readTurn, transcriptFiles } from "../../claude/turn-usage.js";
import { costOfModels } from "../../pricing.js";
import type { SessionRecord } from "../../store/schema.js";
import { serverAction } from "../audit.js";
import { spentOf } from "../spend/totals.js";
import type { Deps } from "../deps.js";
import { waitForChange } from "../../util/fs/file-change.js";
import { poolOfSession } from "../spend/pool.js";
import type { Session } from "../session.js";
import { interrupt } from "../turn/control.js";

/** How often a busy budgeted session's transcript is read when nothing wakes the loop (a sub-agent's file). */
const LOOK_EVERY_MS = 1000;
/** Reads at most this often (the CLI writes its transcript on a 100 ms timer; a long turn is read again from its start). */
const LOOK_MIN_MS = 250;

export class BudgetWatch {
  private closed = false;

  constructor(private readonly d: Deps) {}

  /** Called for every batch of a followed session's events. */
  changed(x: Session): void {
    if (this.closed || x.budgetWatch || x.live.fold.status !== "busy") return;
    x.budgetWatch = true;
    void this.watch(x)
      .catch((e: unknown) => this.d.log.warn(`${x.id}: watching the budget: ${String(e)}`))
      .finally(() => (x.budgetWatch = false));
  }

  private async watch(x: Session): Promise<void> {
    const d = this.d;
    const r0 = await d.store.get(x.id);
    if (!r0 || (r0.max_budget_usd === undefined && r0.budget_pool === undefined)) return;
    // The runner stops the turn itself (headless: the SDK's maxBudgetUsd).
    if (d.runners[r0.backend]?.caps.ownBudget !== false) return;
    const busy = () => !this.closed && d.registry.session(x.id) === x && x.live.fold.status === "busy";
    while (busy()) {
      const r = await d.store.get(x.id);
      if (!r) return;
      const over = await this.over(r, x);
      if (over) {
        if (!busy()) return;
        const why = `the turn was interrupted: ${over}`;
        d.log.warn(`${x.id}: ${why}`);
        await d.store.patch(x.id, (rec) => {
          rec.error_log = [...rec.error_log, `${new Date().toISOString()} ${why}`].slice(-20);
        });
        await serverAction(d, "budget", "interrupt_session", x.id, () =>
          interrupt(d, { session_id: x.id, timeout_ms: 5000 }, {}),
        );
        return;
      }
      const t0 = Date.now();
      await waitForChange(
        dirname(transcriptPath(d.cfg.claudeConfigDir, r.cwd, x.live.fold.claude_session_id ?? r.claude_session_id)),
        LOOK_EVERY_MS,
      );
      const rest = LOOK_MIN_MS - (Date.now() - t0);
      if (rest > 0) await new Promise((res) => setTimeout(res, rest).unref());
    }
  }

  /** Why the session's spend, with the turn's lines not yet counted, has reached its budget or its pool's; else undefined. */
  private async over(r: SessionRecord, x: Session): Promise<string | undefined> {
    const main = transcriptPath(this.d.cfg.claudeConfigDir, r.cwd, x.live.fold.claude_session_id ?? r.claude_session_id);
    const counted = r.usage_files ?? {};
    const read = await readTurn(main, transcriptFiles(main), counted, counted);
    const extra = costOfModels(read.total.model_usage);
    if (!extra.cost_complete)
      return `the turn used ${extra.unpriced_models.join(", ")}, which has no price, and the session has a budget (it fails closed)`;
    const now = extra.cost_usd ?? 0;
    const own = spentOf(r);
    if (r.max_budget_usd !== undefined && (own.cost_usd ?? 0) + now >= r.max_budget_usd) {
      return `max_budget_usd: the session has cost $${((own.cost_usd ?? 0) + now).toFixed(4)} of its $${r.max_budget_usd} budget`;
    }
    const p = await poolOfSession(this.d, r);
    if (p && p.spent + now >= p.cap)
      return `the team budget of lead ${p.lead}: the lead and its teammates have cost $${(p.spent + now).toFixed(4)} of its $${p.cap} budget`;
    return undefined;
  }

  close(): void {
    this.closed = true;
  }
}

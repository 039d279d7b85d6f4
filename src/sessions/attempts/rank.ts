/** The ranking of fan_out's attempts: best first; a failed or timed-out attempt always after every completed one. */
import type { AttemptResult } from "../../api/index.js";

export type Unranked = Omit<AttemptResult, "rank">;

const OUTCOME_ORDER = { completed: 0, timed_out: 1, failed: 1 } as const;

/** Completed before failed/timed out; then more checks passed; then all passed first; then the smaller diff; then the quicker. */
export function rank(attempts: readonly Unranked[]): AttemptResult[] {
  const allPassed = (a: Unranked) => (a.checks_passed === a.checks_total ? 0 : 1);
  const lines = (a: Unranked) => a.diff.added + a.diff.removed;
  return [...attempts]
    .sort(
      (a, b) =>
        OUTCOME_ORDER[a.outcome] - OUTCOME_ORDER[b.outcome] ||
        allPassed(a) - allPassed(b) ||
        b.checks_passed - a.checks_passed ||
        lines(a) - lines(b) ||
        a.duration_ms - b.duration_ms,
    )
    .map((a, i) => ({ rank: i + 1, ...a }));
}

const cell = (s: string) => s.replace(/[|\s]+/g, " ").trim();

/** The ranking as a text (markdown) table. */
export function table(ranked: readonly AttemptResult[]): string {
  const rows = ranked.map((a) =>
    [
      String(a.rank),
      a.session_id,
      a.model ?? "",
      a.outcome === "completed" ? "completed" : `${a.outcome}: ${cell(a.reason ?? "").slice(0, 80)}`,
      `${a.checks_passed}/${a.checks_total}`,
      `${a.diff.files} files +${a.diff.added} -${a.diff.removed}`,
      a.cost_usd === undefined || a.cost_usd === null ? "?" : `$${a.cost_usd.toFixed(4)}`,
      `${(a.duration_ms / 1000).toFixed(1)} s`,
      cell(a.summary).slice(0, 80),
    ].join(" | "),
  );
  return [
    "rank | session | model | outcome | checks | diff | cost | time | answer",
    "--- | --- | --- | --- | --- | --- | --- | --- | ---",
    ...rows,
  ]
    .map((r) => `| ${r} |`)
    .join("\n");
}

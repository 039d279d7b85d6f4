/** fan_out's ranking (issue 34): completed before failed or timed out, then all checks passed, more passed, the smaller diff, the quicker. */
import { describe, expect, it } from "vitest";
import { rank, table, type Unranked } from "../../src/sessions/attempts/rank.js";

const attempt = (id: string, o: Partial<Unranked> = {}): Unranked => ({
  session_id: id,
  branch: `cs/${id}`,
  worktree: `/w/${id}`,
  outcome: "completed",
  checks_passed: 2,
  checks_total: 2,
  checks: [],
  diff: { files: 1, added: 5, removed: 5 },
  duration_ms: 1000,
  summary: "done",
  ...o,
});

describe("rank", () => {
  it("puts failed and timed-out attempts last whatever their checks, and orders the rest", () => {
    const r = rank([
      attempt("failed", { outcome: "failed", reason: "TURN_FAILED", checks_passed: 2 }),
      attempt("one-check", { checks_passed: 1 }),
      attempt("big", { diff: { files: 9, added: 100, removed: 0 } }),
      attempt("slow", { duration_ms: 5000 }),
      attempt("best"),
      attempt("late", { outcome: "timed_out", reason: "no answer" }),
    ]);
    expect(r.map((a) => [a.rank, a.session_id])).toEqual([
      [1, "best"],
      [2, "slow"],
      [3, "big"],
      [4, "one-check"],
      [5, "failed"],
      [6, "late"],
    ]);
  });

  it("a table with one row per attempt; cells cannot break its columns", () => {
    const t = table(
      rank([
        attempt("a", { summary: "line one\nline | two", cost_usd: 0.0123 }),
        attempt("b", { outcome: "failed", reason: "bad\nthing" }),
      ]),
    );
    const rows = t.split("\n");
    expect(rows).toHaveLength(4);
    expect(rows[2]).toBe("| 1 | a |  | completed | 2/2 | 1 files +5 -5 | $0.0123 | 1.0 s | line one line two |");
    expect(rows[3]).toContain("| failed: bad thing |");
  });
});

/**
 * The transcript index (issue #12): scripts/bench/history.mjs over a generated corpus — 10,000 conversations,
 * ~1 GB, mixed English, Japanese and Chinese (full); 300 conversations, ~30 MB (--quick, to prove it works).
 * The corpus is made once per size under the temp directory and reused (it is deterministic).
 */
import { historyBench } from "../history.mjs";
import { summary } from "../stats.mjs";

export async function history(cfg, log) {
  const size = cfg.mode === "quick" ? { conversations: "300", mb: "30" } : { conversations: "10000", mb: "1000" };
  const r = await historyBench({ ...size, keep: false, grepQueries: cfg.mode === "quick" ? 20 : 100, listRuns: 20, log });
  const s = r.samples;
  const row = (key, figure, samples, target, pass, notes) => {
    const sm = summary(samples);
    return {
      key,
      figure,
      runs: sm.n,
      p50: sm.p50,
      p95: sm.p95,
      p99: sm.p99,
      notes,
      target,
      result: pass === undefined ? "" : pass ? "PASS" : "MISS",
      data: sm,
    };
  };
  const mb = Number(r.rows[0][1].match(/(\d+) MB/)?.[1] ?? 0);
  const list = summary(s.listTimes);
  const search = summary(s.searchTimes);
  const inc = summary(s.incTimes);
  const grep = summary(s.grepTimes);
  return [
    {
      key: "history-build",
      figure: `history: full index build (${size.conversations} conversations, ${mb} MB)`,
      value: `${(s.buildMs / 1000).toFixed(1)} s`,
      notes: `${(mb / (s.buildMs / 1000)).toFixed(1)} MB/s, worker thread`,
      target: "",
      result: "",
    },
    {
      key: "history-rss",
      figure: "history: peak RSS during the build",
      value: `${(s.buildPeakRss / 1048576).toFixed(0)} MB`,
      notes: "whole process",
      target: "≤ 300 MB",
      result: s.buildPeakRss <= 300 * 1048576 ? "PASS" : "MISS",
    },
    {
      key: "history-usage",
      figure: "history: usage totals = generator's",
      value: s.usageOk ? "equal" : "DIFFER",
      notes: "each API message once",
      target: "0 overcount",
      result: s.usageOk ? "PASS" : "MISS",
    },
    row("history-list", `history: list_conversations of all ${size.conversations}`, s.listTimes, "p50 ≤ 100 ms", list.p50 <= 100),
    row(
      "history-search",
      "history: search_conversations, 100 queries",
      s.searchTimes,
      "p50 ≤ 50, p95 ≤ 200 ms",
      search.p50 <= 50 && search.p95 <= 200,
      "words, phrases, Japanese, Chinese",
    ),
    row(
      "history-grep",
      "history: grep -rlF baseline, same queries",
      s.grepTimes,
      "",
      undefined,
      `search is ${(grep.p50 / search.p50).toFixed(0)}× faster at p50`,
    ),
    row(
      "history-incremental",
      "history: incremental update after one appended turn",
      s.incTimes,
      "p50 ≤ 20 ms",
      inc.p50 <= 20 && s.incFound,
      s.incFound ? "appended text found" : "appended text NOT found",
    ),
  ];
}

#!/usr/bin/env node
/**
 * Benchmark of the transcript index (src/history) over a generated corpus (corpus.mjs).
 *
 *   npm run build && node scripts/bench/history.mjs [--corpus DIR] [--conversations 10000] [--mb 1000] [--keep]
 *
 * Also the `history` phase of `npm run bench` (scripts/bench/phases/history.mjs; --quick uses a small corpus).
 * Generates the corpus when DIR has none, then, in this order: full index build in a worker thread (time,
 * MB/s, peak RSS of this process), usage totals against the generator's, list of every conversation,
 * 100 searches (English words, phrases, Japanese, Chinese) and the same strings with `grep -rlF` over the
 * corpus, and an incremental update after one appended turn. Prints a markdown table.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { randomUUID } from "node:crypto";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Runs the whole history bench. Returns `rows` ([figure, result, target, pass?]) and the raw samples.
 * opt: { corpus?, conversations, mb, keep, grepQueries, listRuns, log }
 */
export async function historyBench(opt) {
  const corpus = opt.corpus ?? join(tmpdir(), `cs-history-corpus-${opt.conversations}-${opt.mb}`);
  if (!existsSync(join(corpus, "expected.json"))) {
    (opt.log ?? console.error)(`generating corpus in ${corpus} …`);
    execFileSync(
      process.execPath,
      [join(here, "corpus.mjs"), "--out", corpus, "--conversations", opt.conversations, "--mb", opt.mb],
      { stdio: "inherit" },
    );
  }
  const { History } = await import(join(here, "../../dist/history/history.js"));
  const expected = JSON.parse(readFileSync(join(corpus, "expected.json"), "utf8"));
  const stateDir = join(tmpdir(), `cs-history-bench-state-${process.pid}`);
  rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });

  const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  };
  const ms = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

  // 1. Full build (worker thread).
  const h = new History({ stateDir, configDir: corpus, mode: "worker", syncOnOpen: false });
  const t0 = performance.now();
  const built = await h.sync();
  const buildMs = performance.now() - t0;
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const buildPeakRss = peakRss;
  const mb = expected.bytes / 1048576;
  const dbMb =
    readdirSync(stateDir)
      .filter((f) => f.startsWith("history.sqlite"))
      .reduce((a, f) => a + readFileSync(join(stateDir, f)).length, 0) / 1048576;

  // 2. Usage totals.
  const totals = h.usage({ by: "model" });
  const fields = Object.keys(expected.usage);
  const usageOk = totals.total.messages === expected.messages && fields.every((f) => totals.total.usage[f] === expected.usage[f]);

  // 3. List every conversation.
  const listTimes = [];
  let listed = 0;
  for (let i = 0; i < (opt.listRuns ?? 20); i++) {
    const t = performance.now();
    listed = h.listConversations({ limit: 10_000 }).conversations.length;
    listTimes.push(performance.now() - t);
  }

  // 4. Searches: 100 queries.
  const { EN, EN_PHRASES, JA, ZH } = await import(join(here, "corpus-words.mjs"));
  const queries = [
    ...EN.filter((w) => w.length >= 5).slice(0, 40),
    ...EN_PHRASES.map((p) => `"${p}"`),
    ...EN.filter((w) => w.length >= 6)
      .slice(10, 20)
      .map((w, i, a) => `${w} ${a[(i + 3) % a.length]}`),
    ...JA.filter((w) => [...w].length >= 3).slice(0, 14),
    ...JA.filter((w) => [...w].length >= 2)
      .slice(0, 6)
      .map((w, i, a) => `${w}${i % 2 ? "を" : "の"}${a[(i + 1) % a.length]}`),
    ...ZH.filter((w) => [...w].length >= 3).slice(0, 6),
    ...ZH.slice(0, 14).map((w, i, a) => `${w}${a[(i + 2) % a.length]}`),
  ];
  for (let i = 0; queries.length < 100; i++)
    queries.push(i % 2 ? `${ZH[i % ZH.length]} ${EN[(i * 7) % EN.length]}` : `${JA[i % JA.length]}と${JA[(i + 5) % JA.length]}`);
  const searchTimes = [];
  let withHits = 0;
  for (const q of queries) {
    const t = performance.now();
    const r = h.searchConversations({ query: q, limit: 20 });
    searchTimes.push(performance.now() - t);
    if (r.results.length) withHits++;
  }
  // Two-character queries (LIKE fallback), reported apart.
  const shortTimes = [];
  for (const q of ["東京", "天気", "数据", "索引", "CI"]) {
    const t = performance.now();
    h.searchConversations({ query: q, limit: 20 });
    shortTimes.push(performance.now() - t);
  }

  // 5. grep baseline over the corpus: the longest term of each query, files listed.
  const grepN = Math.min(queries.length, Number(opt.grepQueries));
  const grepTimes = [];
  for (const q of queries.slice(0, grepN)) {
    const term = q.match(/"([^"]+)"/)?.[1] ?? q.split(" ").sort((a, b) => b.length - a.length)[0];
    const t = performance.now();
    spawnSync("grep", ["-rlF", "--", term, join(corpus, "projects")], { stdio: "ignore" });
    grepTimes.push(performance.now() - t);
  }

  // 6. Incremental update after one appended turn (a fresh conversation file per run, then appends).
  const proj = join(corpus, "projects", readdirSync(join(corpus, "projects"))[0]);
  const sid = randomUUID();
  const file = join(proj, `${sid}.jsonl`);
  const incTimes = [];
  for (let i = 0; i < 50; i++) {
    const ts = new Date(Date.parse("2026-12-01T00:00:00Z") + i * 60_000).toISOString();
    const u = {
      type: "user",
      uuid: randomUUID(),
      sessionId: sid,
      cwd: "/bench",
      timestamp: ts,
      message: { role: "user", content: `bench turn ${i} about the narwhal${i} migration` },
    };
    const a = {
      type: "assistant",
      uuid: randomUUID(),
      sessionId: sid,
      cwd: "/bench",
      timestamp: ts,
      message: {
        id: `msg_bench_${i}`,
        model: "claude-opus-4-6",
        role: "assistant",
        content: [{ type: "text", text: `Done with narwhal${i}.` }],
        usage: { input_tokens: 10, output_tokens: 10 },
      },
    };
    appendFileSync(file, JSON.stringify(u) + "\n" + JSON.stringify(a) + "\n");
    const t = performance.now();
    await h.update([file]);
    incTimes.push(performance.now() - t);
  }
  const incFound = h.searchConversations({ query: "narwhal49" }).results.length === 1;
  clearInterval(sampler);
  await h.close();
  rmSync(file, { force: true });
  if (!opt.keep) rmSync(stateDir, { recursive: true, force: true });

  const grepP50 = pct(grepTimes, 50);
  const rows = [
    [
      "corpus",
      `${expected.conversations} conversations, ${mb.toFixed(0)} MB, ${expected.lines} lines, ${expected.messages} API messages (${expected.streamed_messages} streamed, ${expected.sidechain_messages} sidechain)`,
      "",
    ],
    [
      "full build (worker thread)",
      `${(buildMs / 1000).toFixed(1)} s, ${(mb / (buildMs / 1000)).toFixed(1)} MB/s, index ${dbMb.toFixed(0)} MB`,
      "",
    ],
    [
      "peak RSS during the build (whole process)",
      `${(buildPeakRss / 1048576).toFixed(0)} MB`,
      `≤ 300 MB ${buildPeakRss <= 300 * 1048576 ? "✔" : "✘"}`,
    ],
    [
      "usage totals = generator's",
      usageOk
        ? `yes (${totals.total.messages} messages)`
        : `NO: ${JSON.stringify(totals.total.usage)} vs ${JSON.stringify(expected.usage)}`,
      usageOk ? "✔" : "✘",
    ],
    [
      "list all conversations (limit 10,000), 20 runs",
      `p50 ${ms(pct(listTimes, 50))}, p95 ${ms(pct(listTimes, 95))} (${listed} listed)`,
      `p50 ≤ 100 ms ${pct(listTimes, 50) <= 100 ? "✔" : "✘"}`,
    ],
    [
      `search, ${queries.length} queries (${withHits} with hits)`,
      `p50 ${ms(pct(searchTimes, 50))}, p95 ${ms(pct(searchTimes, 95))}, max ${ms(Math.max(...searchTimes))}`,
      `p50 ≤ 50, p95 ≤ 200 ms ${pct(searchTimes, 50) <= 50 && pct(searchTimes, 95) <= 200 ? "✔" : "✘"}`,
    ],
    ["search, 2-character queries (LIKE fallback), 5", `p50 ${ms(pct(shortTimes, 50))}, max ${ms(Math.max(...shortTimes))}`, ""],
    [
      `grep -rlF over the corpus, ${grepN} queries`,
      `p50 ${ms(grepP50)} → search is ${(grepP50 / pct(searchTimes, 50)).toFixed(0)}× faster at p50`,
      "",
    ],
    [
      "incremental update after one appended turn, 50 runs",
      `p50 ${ms(pct(incTimes, 50))}, p95 ${ms(pct(incTimes, 95))}; appended text found: ${incFound ? "yes" : "NO"}`,
      `p50 ≤ 20 ms ${pct(incTimes, 50) <= 20 && incFound ? "✔" : "✘"}`,
    ],
  ];
  const header = `history bench: Node ${process.versions.node}, SQLite ${process.versions.sqlite}, build stats ${JSON.stringify(built)}`;
  return {
    header,
    rows,
    samples: { buildMs, buildPeakRss, listTimes, searchTimes, shortTimes, grepTimes, incTimes, usageOk, incFound },
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      corpus: { type: "string" },
      conversations: { type: "string", default: "10000" },
      mb: { type: "string", default: "1000" },
      keep: { type: "boolean", default: false },
      "grep-queries": { type: "string", default: "100" },
    },
  });
  const r = await historyBench({
    corpus: values.corpus,
    conversations: values.conversations,
    mb: values.mb,
    keep: values.keep,
    grepQueries: values["grep-queries"],
  });
  console.log(`\n${r.header}\n`);
  console.log("| figure | result | target |\n| --- | --- | --- |");
  for (const row of r.rows) console.log(`| ${row.join(" | ")} |`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();

#!/usr/bin/env node
/**
 * Exact-delivery stress (issue 19 item 13): repeated text sent with send_message through the built server to the real
 * Claude Code CLI (offline, the local mock of the Messages API) must reach the API byte-exact, or the call must be an
 * error naming the difference: never a success for another prompt.
 *
 *   npm run build && node scripts/exact-delivery.mjs [--runs=50] [--versions=2.1.197,2.1.330] [--backends=tmux,pty]
 *                                                    [--texts=x,ab,log,word,lines,mixed] [--per-session=10]
 *
 * x, ab, log and word are repeated text (their end occurs all through them: the last character goes alone, see
 * src/runners/terminal/delivery.ts); lines (200 numbered log lines) and mixed (the send bench's 30 seeded prompts in
 * turn, 1 to 20,000 characters with emoji, CJK and code; tabs as four spaces, NFC) are pasted whole and
 * told drawn by the box's count or their unique end. The default is the four repeated texts.
 *
 * Versions other than the pinned one come from the CLI cache (scripts/cli-cache.mjs; installed when missing). The
 * mock answers "ok" (a short reply keeps the history and the screen small); a session takes --per-session sends and is
 * replaced. Per CLI version × backend × text the table gives runs, exact (the API got the text), mismatch errors (the
 * call failed with the server's "received a different prompt" PROCESS_ERROR), false successes (the call said ok and
 * the API got something else: must be 0) and other errors. Exit code 1 when there is a false success or a run that was
 * neither exact nor a mismatch error.
 */
import { cliFor } from "./cli-cache.mjs";
import { makeWorld, cleanupAll, sutPath } from "./bench/world.mjs";
import { prompts } from "./bench/phases/send.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const unknown = argv.filter((a) => !/^--(runs|versions|backends|texts|per-session)=.+$/.test(a));
if (unknown.length) {
  process.stderr.write(
    "usage: node scripts/exact-delivery.mjs [--runs=50] [--versions=2.1.197,2.1.330] [--backends=tmux,pty] [--texts=x,ab,log,word,lines,mixed] [--per-session=10]\n",
  );
  process.exit(2);
}

const same = (t) => () => t;
// A pasted tab reaches the API as four spaces (facts §10), and 2.1.330 composes "e" + U+0301 into "é" (NFC; the server
// reports it as a mismatch): the mixed prompts carry spaces and composed characters, to compare as sent.
const MIXED = prompts(30).map((p) => p.replace(/\t/g, "    ").normalize("NFC"));
const TEXTS = {
  x: ['"x" × 5,000', same("x".repeat(5000))],
  ab: ['"ab" × 3,000', same("ab".repeat(3000))],
  log: ["200 identical log lines", same("2026-11-25 ERROR same line\n".repeat(200).trimEnd())],
  word: ["20,000 chars of one word", same("word ".repeat(4000).trimEnd())],
  lines: [
    "200 numbered log lines",
    same(Array.from({ length: 200 }, (_, i) => `2026-11-25 INFO request ${i + 1} of 200 served`).join("\n")),
  ],
  mixed: ["the send bench's 30 prompts", (i) => MIXED[i % MIXED.length]],
};
const runs = Number(opt("runs", "50"));
const perSession = Number(opt("per-session", "10"));
const versions = opt("versions", "2.1.197,2.1.330").split(",");
const backends = opt("backends", "tmux,pty").split(",");
const texts = opt("texts", "x,ab,log,word")
  .split(",")
  .map((k) => {
    if (!TEXTS[k]) throw new Error(`unknown text ${k} (${Object.keys(TEXTS).join(", ")})`);
    return [k, ...TEXTS[k]];
  });
const API_KEY = `sk-ant-api03-exact-${"k".repeat(60)}-APPROVEDKEY0123456789`;
const log = (m) => process.stderr.write(`${m}\n`);

async function oneVersion(version) {
  const cli = cliFor(version, log);
  const { startMockApi } = await import(sutPath("tests", "fixtures", "mock-anthropic.ts"));
  const { prepareClaudeHome } = await import(sutPath("tests", "fixtures", "claude-home.ts"));
  const mock = await startMockApi({ handler: (req) => (req.lastUserText && !req.toolResult ? { text: "ok" } : undefined) });
  const w = makeWorld("exact", { CLAUDE_PATH: cli.path, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000" });
  // A failed send ends its session (its turn may run, text may be left in the box): a few spare sessions make up for it.
  const sessions = Math.ceil(runs / perSession) + 3;
  const dirs = new Map();
  for (const b of backends)
    for (const [k] of texts) for (let i = 0; i < sessions; i++) dirs.set(`${b}/${k}/${i}`, w.dir(`${b}-${k}`));
  const prepared = await prepareClaudeHome({
    home: w.home,
    apiKey: API_KEY,
    trustedDirs: [...dirs.values()],
    mockUrl: mock.url,
    cliVersion: cli.version,
  });
  Object.assign(w.env, prepared.env, { CLAUDE_PATH: cli.path });
  const m = await w.connect();
  const rows = [];
  try {
    for (const backend of backends) {
      for (const [k, label, textOf] of texts) {
        const row = {
          version: cli.version,
          backend,
          text: label,
          runs: 0,
          exact: 0,
          mismatch: 0,
          false_success: 0,
          other: 0,
          ms: [],
          notes: [],
        };
        rows.push(row);
        for (let i = 0; i < sessions && row.runs < runs; i++) {
          const s = await m.call("start_session", { cwd: dirs.get(`${backend}/${k}/${i}`), permission_mode: "default", backend });
          if (!s.ok) {
            row.notes.push(`start: ${s.error?.code} ${s.error?.message?.split("\n")[0]}`);
            continue;
          }
          const id = s.data.session_id;
          for (let j = 0; j < perSession && row.runs < runs; j++) {
            const text = textOf(row.runs);
            const before = mock.mainRequests().length;
            const t0 = performance.now();
            const r = await m.call("send_message", { session_id: id, message: text, timeout_ms: 60_000 });
            row.ms.push(performance.now() - t0);
            row.runs += 1;
            const got = mock
              .mainRequests()
              .slice(before)
              .map((q) => q.lastUserText);
            if (r.ok && got.length === 1 && got[0] === text) row.exact += 1;
            else if (r.ok) {
              row.false_success += 1;
              row.notes.push(
                `FALSE SUCCESS: sent ${text.length} chars, the API got ${got.map((g) => g?.length).join("+")} chars`,
              );
            } else if (r.error?.code === "PROCESS_ERROR" && /received a different prompt/.test(r.error.message)) {
              row.mismatch += 1;
              row.notes.push(r.error.message.replace(/^session \S+: /, "").split(" (sent")[0]);
            } else {
              row.other += 1;
              row.notes.push(`${r.error?.code}: ${r.error?.message?.split("\n")[0]}`);
            }
            // A failed send may leave the turn running or text in the box: the next sends get a new session.
            if (!r.ok) break;
          }
          await m.call("kill_session", { session_id: id });
        }
        log(
          `${cli.version} ${backend} ${label}: ${row.exact}/${row.runs} exact, ${row.mismatch} mismatch errors, ${row.false_success} false successes, ${row.other} other`,
        );
      }
    }
  } finally {
    await m.close();
    w.cleanup();
    await mock.close();
  }
  return rows;
}

const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
const all = [];
try {
  for (const v of versions) all.push(...(await oneVersion(v)));
} finally {
  cleanupAll();
}
const head = ["CLI", "backend", "text", "runs", "exact", "mismatch errors", "false successes", "other errors", "send p50"];
const lines = [head, head.map(() => "---")];
for (const r of all)
  lines.push([
    r.version,
    r.backend,
    r.text,
    r.runs,
    r.exact,
    r.mismatch,
    r.false_success,
    r.other,
    `${(median(r.ms) / 1000).toFixed(1)} s`,
  ]);
process.stdout.write(lines.map((l) => `| ${l.join(" | ")} |`).join("\n") + "\n");
for (const r of all) for (const n of [...new Set(r.notes)]) process.stdout.write(`- ${r.version} ${r.backend} ${r.text}: ${n}\n`);
process.exit(all.some((r) => r.false_success > 0 || r.other > 0 || r.exact + r.mismatch < r.runs) ? 1 : 0);

/**
 * send: from calling send_message (wait_for_response: false) to the prompt's UserPromptSubmit line
 * appearing in events.jsonl (the bench's fs.watch on the file), over a fixed, seeded set of
 * prompts of mixed sizes (1 to 20,000 characters: short, medium, long, multi-line, with non-ASCII
 * text, emoji, shell metacharacters and code). One session; after each prompt the bench waits for
 * its turn to end (wait_for_completion, not timed) before sending the next.
 *
 * Every prompt is checked byte for byte against the `prompt` field of its UserPromptSubmit
 * payload: lost = no UserPromptSubmit came; split = more than one came for one send; merged = one
 * carried more than this prompt; corrupted = one came but differs otherwise.
 *
 * Prompts have no leading/trailing whitespace, no trailing whitespace on a line, no CR and no
 * control characters: the server normalises line endings and strips trailing newlines by design,
 * and a real prompt box trims, so such prompts would not be expected back byte-exact.
 */
import { EventWatcher } from "../events.mjs";
import { rng, round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

const WORDS = (
  "the quick brown fox jumps over lazy dog please refactor this function and add tests for edge cases " +
  "return value error handling should be explicit when the file is missing we log a warning and continue"
).split(" ");
const EXOTIC = [
  "naïve",
  "café",
  "Größe",
  "façade",
  "日本語のテキスト",
  "中文字符",
  "Привет мир",
  "שלום עולם",
  "مرحبا",
  "😀",
  "👩‍💻",
  "🇫🇷",
  "e\u0301",
  "Ω≈ç√∫",
  "→",
  "…",
  "«quoted»",
  "\u00a0nbsp",
];
const CODE = [
  "const x = { a: 1, b: [2, 3] };",
  "if (a && b || !c) { return `tpl ${x}`; }",
  "echo \"$HOME\" | grep -v '^#' > out.txt",
  "$(rm -rf /tmp/nothing)",
  "C:\\path\\to\\file",
  "SELECT * FROM t WHERE name = 'O''Brien';",
  '<div class="x">&amp;</div>',
  "a\tb\tc",
  "#!/bin/sh",
  "; ls; `id`",
  "%s %d %%",
  "{{ template }}",
  "[link](http://127.0.0.1/)",
];

/** Code points, not UTF-16 units: cutting a string never splits an emoji into lone surrogates. */
const cps = (s) => Array.from(s);

function makePrompt(r, size, idx) {
  if (size === 1) return r.pick(["x", "é", "7", "Z"]);
  const lines = [];
  let line = [];
  let len = 0;
  const lineLen = r.int(40, 160);
  while (len < size + 20) {
    const kind = r.next();
    const tok = kind < 0.7 ? r.pick(WORDS) : kind < 0.85 ? r.pick(EXOTIC) : r.pick(CODE);
    line.push(tok);
    len += cps(tok).length + 1;
    if (line.join(" ").length >= lineLen) {
      lines.push(line.join(" "));
      line = [];
      if (r.next() < 0.15) lines.push(""); // a blank line between paragraphs
    }
  }
  if (line.length) lines.push(line.join(" "));
  let text = `P${idx} ` + lines.join("\n");
  text = cps(text).slice(0, size).join("");
  // No trailing whitespace on any line, none at the ends, no trailing backslash (it continues a line).
  const clean = (t) =>
    t
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n")
      .replace(/^\s+|[\s\\]+$/g, "");
  text = clean(text);
  while (cps(text).length < size) text = clean(text + "z".repeat(size - cps(text).length));
  return text;
}

export function prompts(n, seed = 7001) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    let size;
    if (i === 0) size = 1;
    else if (i === 1) size = 20_000;
    else {
      const c = r.next();
      size = c < 0.35 ? r.int(1, 80) : c < 0.65 ? r.int(81, 1000) : c < 0.85 ? r.int(1001, 5000) : r.int(5001, 20_000);
    }
    out.push(makePrompt(r, size, i));
  }
  // Shuffle (seeded) so the big ones are not all at the start.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r.next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export async function send(cfg, log) {
  const w = makeWorld("send");
  let m;
  let ew;
  try {
    m = await w.connect();
    const s = await m.must("start_session", { cwd: w.dir("send") });
    const id = s.session_id;
    ew = new EventWatcher(w.eventsPath(id));
    await ew.start();
    const list = prompts(cfg.sendPrompts);
    const lat = [];
    const callLat = [];
    const bad = { lost: [], merged: [], split: [], corrupted: [] };
    const bySize = { "1-80": [], "81-1000": [], "1001-5000": [], "5001-20000": [] };
    let sentChars = 0;
    const replyBad = [];
    for (let i = 0; i < list.length; i++) {
      const msg = list[i];
      const n = cps(msg).length;
      sentChars += n;
      const mark = ew.count;
      const t0 = performance.now();
      const callP = m
        .call("send_message", { session_id: id, message: msg, wait_for_response: false })
        .then((x) => ({ x, t: performance.now() }));
      const upsP = ew.waitFor((e) => e.hook_event_name === "UserPromptSubmit", { from: mark, timeoutMs: 20_000 });
      const [c, ups] = await Promise.all([callP, upsP]);
      if (!c.x.ok && c.x.error?.code !== "TIMEOUT")
        throw new Error(`send_message failed: ${c.x.error?.code}: ${c.x.error?.message}`);
      const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 30_000 });
      if (!done.ok || !done.data.completed)
        throw new Error(`prompt ${i}: the turn did not complete: ${JSON.stringify(done.ok ? done.data : done.error)}`);
      // Not part of the figure: the reply the server read back from the Stop payload must be exact too.
      if (done.data.last_response !== `FAKE REPLY: ${msg}`)
        replyBad.push({ i, sent_chars: n, first_diff: firstDiff(`FAKE REPLY: ${msg}`, done.data.last_response) });
      const upsCount = ew.events.slice(mark).filter((e) => e.ev.hook_event_name === "UserPromptSubmit").length;
      if (!ups) {
        bad.lost.push(i);
        continue;
      }
      const got = ups.ev.prompt;
      if (upsCount > 1) bad.split.push(i);
      else if (got !== msg) {
        if (typeof got === "string" && got.includes(msg) && got.length > msg.length) bad.merged.push(i);
        else
          bad.corrupted.push({
            i,
            sent_chars: n,
            got_chars: typeof got === "string" ? cps(got).length : null,
            first_diff: firstDiff(msg, got),
          });
      }
      const ms = ups.t - t0;
      lat.push(ms);
      callLat.push(c.t - t0);
      bySize[n <= 80 ? "1-80" : n <= 1000 ? "81-1000" : n <= 5000 ? "1001-5000" : "5001-20000"].push(ms);
      if (log && (i + 1) % 100 === 0) log(`send: ${i + 1}/${list.length}`);
    }
    const totalUps = ew.events.filter((e) => e.ev.hook_event_name === "UserPromptSubmit").length;
    const sm = summary(lat);
    const lostOrMerged = bad.lost.length + bad.merged.length + bad.split.length;
    const pass = sm.p50 <= 150 && lostOrMerged === 0 && bad.corrupted.length === 0 && totalUps === list.length;
    await m.call("kill_session", { session_id: id, force: true });
    return [
      {
        key: "send",
        figure: "send: send_message called → UserPromptSubmit seen",
        runs: list.length,
        ...sm,
        notes: `1–20,000 chars; ${bad.lost.length} lost, ${bad.merged.length} merged, ${bad.split.length} split, ${bad.corrupted.length} not byte-exact; 5k–20k-char p50 ${summary(bySize["5001-20000"]).p50 ?? "—"} ms; replies as returned by wait_for_completion: ${replyBad.length} not byte-exact`,
        target: "p50 ≤ 150 ms, 0 lost or merged",
        result: pass ? "PASS" : "MISS",
        data: {
          latency_ms: sm,
          call_return_ms: summary(callLat),
          by_size_ms: Object.fromEntries(Object.entries(bySize).map(([k, v]) => [k, summary(v)])),
          chars_sent: sentChars,
          user_prompt_submits: totalUps,
          problems: bad,
          replies_not_exact: replyBad,
          samples_ms: lat.map((x) => round(x)),
        },
      },
    ];
  } finally {
    ew?.close();
    await m?.close();
    w.cleanup();
  }
}

function firstDiff(a, b) {
  if (typeof b !== "string") return { at: 0, sent: a.slice(0, 40), got: String(b) };
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return {
    at: i,
    sent: JSON.stringify(a.slice(Math.max(0, i - 10), i + 30)),
    got: JSON.stringify(b.slice(Math.max(0, i - 10), i + 30)),
  };
}

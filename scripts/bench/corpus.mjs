#!/usr/bin/env node
/**
 * A deterministic corpus of Claude Code transcripts in their real line format, for the history benchmark.
 *
 *   node scripts/bench/corpus.mjs --out /tmp/cs-corpus [--conversations 10000] [--mb 1000] [--seed 12]
 *
 * Writes <out>/projects/<mangled cwd>/<session id>.jsonl: user lines, assistant lines with message.id,
 * model and usage (some replies streamed as several lines with one id and the same usage), tool calls and
 * tool results, sub-agent (isSidechain) lines, summary lines; English, Japanese and Chinese text. Alongside,
 * <out>/expected.json holds the usage totals counted once per message id (sidechain included), overall and
 * per model, so an indexer's totals can be checked exactly.
 */
import { mkdirSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    out: { type: "string" },
    conversations: { type: "string", default: "10000" },
    mb: { type: "string", default: "1000" },
    seed: { type: "string", default: "12" },
  },
});
if (!opt.out) {
  console.error("usage: corpus.mjs --out DIR [--conversations N] [--mb SIZE] [--seed S]");
  process.exit(2);
}
const N = Number(opt.conversations);
const targetBytes = Number(opt.mb) * 1024 * 1024;

let seed = Number(opt.seed) >>> 0 || 1;
function rnd() {
  // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (a, b) => a + Math.floor(rnd() * (b - a + 1));
const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
const hex = (n) => Array.from({ length: n }, () => "0123456789abcdef"[int(0, 15)]).join("");
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;

import { EN, EN_PHRASES, JA, JA_GLUE, ZH, ZH_GLUE } from "./corpus-words.mjs";

function sentence(lang, words) {
  if (lang === "en") {
    const out = [];
    for (let i = 0; i < words; i++) out.push(rnd() < 0.04 ? pick(EN_PHRASES) : pick(EN));
    const s = out.join(" ");
    return s[0].toUpperCase() + s.slice(1) + ".";
  }
  const [vocab, glue] = lang === "ja" ? [JA, JA_GLUE] : [ZH, ZH_GLUE];
  let s = "";
  for (let i = 0; i < words; i++) s += pick(vocab) + pick(glue);
  return s;
}
const paragraph = (lang, chars) => {
  let s = "";
  while (s.length < chars) s += sentence(lang, int(6, 18)) + " ";
  return s.trim();
};

const MODELS = [
  "claude-sonnet-4-5-20250929",
  "claude-opus-4-6",
  "claude-haiku-4-5-20251001",
  "claude-sonnet-4-6",
  "claude-experimental-9",
];
const MODEL_WEIGHTS = [0.45, 0.25, 0.15, 0.13, 0.02];
function model() {
  let r = rnd();
  for (let i = 0; i < MODELS.length; i++) if ((r -= MODEL_WEIGHTS[i]) < 0) return MODELS[i];
  return MODELS[0];
}

const FIELDS = [
  "input_tokens",
  "output_tokens",
  "cache_creation_input_tokens",
  "cache_creation_5m_input_tokens",
  "cache_creation_1h_input_tokens",
  "cache_read_input_tokens",
];
const zero = () => Object.fromEntries(FIELDS.map((f) => [f, 0]));
const expected = {
  conversations: N,
  messages: 0,
  lines: 0,
  bytes: 0,
  usage: zero(),
  by_model: {},
  sidechain_messages: 0,
  streamed_messages: 0,
};

function usage() {
  const c5 = rnd() < 0.5 ? int(0, 4000) : 0;
  const c1 = rnd() < 0.2 ? int(0, 3000) : 0;
  return {
    input_tokens: int(1, 400),
    cache_creation_input_tokens: c5 + c1,
    cache_read_input_tokens: int(0, 60000),
    cache_creation: { ephemeral_5m_input_tokens: c5, ephemeral_1h_input_tokens: c1 },
    output_tokens: int(5, 1500),
    service_tier: "standard",
  };
}
function count(m, u, sidechain) {
  const flat = {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_creation_5m_input_tokens: u.cache_creation.ephemeral_5m_input_tokens,
    cache_creation_1h_input_tokens: u.cache_creation.ephemeral_1h_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
  };
  expected.messages++;
  if (sidechain) expected.sidechain_messages++;
  const bm = (expected.by_model[m] ??= { messages: 0, ...zero() });
  bm.messages++;
  for (const f of FIELDS) ((expected.usage[f] += flat[f]), (bm[f] += flat[f]));
}

const root = join(opt.out, "projects");
rmSync(opt.out, { recursive: true, force: true });
mkdirSync(root, { recursive: true });
const PROJECTS = Array.from({ length: 40 }, (_, i) => `/home/dev/work/project-${i}`);
const perConv = targetBytes / N;
const START = Date.parse("2026-01-05T08:00:00Z");

for (let ci = 0; ci < N; ci++) {
  const cwd = PROJECTS[ci % PROJECTS.length];
  const dir = join(root, cwd.replace(/[^A-Za-z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  const sid = uuid();
  const lang = rnd() < 0.6 ? "en" : rnd() < 0.5 ? "ja" : "zh";
  const m = model();
  let t = START + Math.floor((ci / N) * 300 * 86400_000) + int(0, 3600_000);
  const fd = openSync(join(dir, `${sid}.jsonl`), "w");
  let written = 0;
  let parent = null;
  let lastAssistant = null;
  const base = () => ({
    parentUuid: parent,
    isSidechain: false,
    userType: "external",
    cwd,
    sessionId: sid,
    version: "2.1.330",
    gitBranch: "main",
  });
  const emit = (obj) => {
    const line = JSON.stringify(obj) + "\n";
    writeSync(fd, line);
    written += Buffer.byteLength(line);
    expected.lines++;
  };
  const ts = () => new Date((t += int(2_000, 90_000))).toISOString();
  const budget = perConv * (0.3 + rnd() * 1.4);
  while (written < budget) {
    const turnLang = rnd() < 0.85 ? lang : pick(["en", "ja", "zh"]);
    const u0 = uuid();
    emit({
      ...base(),
      type: "user",
      message: { role: "user", content: paragraph(turnLang, int(40, 400)) },
      uuid: u0,
      timestamp: ts(),
      promptId: uuid(),
    });
    parent = u0;
    const useTool = rnd() < 0.5;
    const id1 = `msg_${hex(24)}`;
    const us1 = usage();
    count(m, us1, false);
    const textBlock = { type: "text", text: paragraph(turnLang, int(80, 600)) };
    if (useTool) {
      expected.streamed_messages++;
      const toolId = `toolu_${hex(24)}`;
      const blocks = [
        textBlock,
        {
          type: "tool_use",
          id: toolId,
          name: pick(["Bash", "Read", "Edit", "Grep"]),
          input: { command: `ls ${pick(EN)}`, description: sentence("en", 5) },
        },
      ];
      for (const b of blocks) {
        const u = uuid();
        emit({
          ...base(),
          type: "assistant",
          message: { id: id1, type: "message", role: "assistant", model: m, content: [b], stop_reason: null, usage: us1 },
          requestId: `req_${hex(20)}`,
          uuid: u,
          timestamp: ts(),
        });
        parent = u;
      }
      const ur = uuid();
      emit({
        ...base(),
        type: "user",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: toolId, content: paragraph("en", int(500, 3000)) }],
        },
        uuid: ur,
        timestamp: ts(),
        toolUseResult: { stdout: "", stderr: "" },
      });
      parent = ur;
      if (rnd() < 0.25) {
        // A sub-agent: its own prompt and replies, marked isSidechain, usage billed to this conversation.
        const sm = pick(["claude-haiku-4-5-20251001", m]);
        for (let k = int(1, 3); k > 0; k--) {
          const sidU = usage();
          count(sm, sidU, true);
          emit({
            ...base(),
            isSidechain: true,
            type: "user",
            message: { role: "user", content: sentence("en", 12) },
            uuid: uuid(),
            timestamp: ts(),
          });
          emit({
            ...base(),
            isSidechain: true,
            type: "assistant",
            message: {
              id: `msg_${hex(24)}`,
              role: "assistant",
              model: sm,
              content: [{ type: "text", text: paragraph("en", 200) }],
              usage: sidU,
            },
            uuid: uuid(),
            timestamp: ts(),
          });
        }
      }
      const id2 = `msg_${hex(24)}`;
      const us2 = usage();
      count(m, us2, false);
      const parts = rnd() < 0.3 ? 3 : 1;
      if (parts > 1) expected.streamed_messages++;
      for (let k = 0; k < parts; k++) {
        const u = uuid();
        emit({
          ...base(),
          type: "assistant",
          message: {
            id: id2,
            type: "message",
            role: "assistant",
            model: m,
            content: [{ type: "text", text: paragraph(turnLang, int(60, 500)) }],
            stop_reason: k === parts - 1 ? "end_turn" : null,
            usage: us2,
          },
          uuid: u,
          timestamp: ts(),
        });
        parent = u;
        lastAssistant = u;
      }
    } else {
      const u = uuid();
      emit({
        ...base(),
        type: "assistant",
        message: {
          id: id1,
          type: "message",
          role: "assistant",
          model: m,
          content: [textBlock],
          stop_reason: "end_turn",
          usage: us1,
        },
        uuid: u,
        timestamp: ts(),
      });
      parent = u;
      lastAssistant = u;
    }
  }
  if (lastAssistant && rnd() < 0.5) emit({ type: "summary", summary: `${sentence(lang, 6)}`, leafUuid: lastAssistant });
  closeSync(fd);
  expected.bytes += written;
}
writeFileSync(join(opt.out, "expected.json"), JSON.stringify(expected, null, 2) + "\n");
console.log(
  `${N} conversations, ${(expected.bytes / 1048576).toFixed(1)} MB, ${expected.lines} lines, ${expected.messages} messages → ${opt.out}`,
);

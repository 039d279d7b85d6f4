import { afterEach, describe, expect, it } from "vitest";
import { parseUsage, usageOfLines, readTurnUsage } from "../../src/claude/usage.js";
import { canonicalModel, costOf, costOfModels, costUsd, PRICES_AS_OF } from "../../src/pricing.js";
import { History } from "../../src/history/history.js";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";

const U = { input_tokens: 100, output_tokens: 50, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000 };

let dirs: Dirs;
let history: History | undefined;
afterEach(async () => {
  await history?.close();
  history = undefined;
  dirs?.cleanup();
});

describe("usage of transcript lines", () => {
  it("counts a reply streamed as several lines with one message id once", () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/a");
    t.user("hi").assistant(
      [
        { type: "text", text: "Let me look." },
        { type: "tool_use", name: "Bash", input: { command: "ls" } },
        { type: "text", text: "Done." },
      ],
      { id: "msg_stream", usage: U },
    );
    const lines = readFileSync(t.path, "utf8").split("\n");
    expect(lines.filter((l) => l.includes("msg_stream"))).toHaveLength(3);
    const r = usageOfLines(lines);
    expect(r.messages).toBe(1);
    expect(r.usage.input_tokens).toBe(100);
    expect(r.usage.output_tokens).toBe(50);
    expect(r.usage.cache_read_input_tokens).toBe(5000);
    expect(r.model_usage["claude-sonnet-4-5-20250929"]?.output_tokens).toBe(50);
  });

  it("keeps the largest value when a later line of the same message reports more output", () => {
    const line = (out: number) =>
      JSON.stringify({
        type: "assistant",
        message: { id: "m1", model: "claude-opus-4-6", usage: { input_tokens: 5, output_tokens: out } },
      });
    const r = usageOfLines([line(1), line(1), line(240)]);
    expect(r.messages).toBe(1);
    expect(r.usage.output_tokens).toBe(240);
  });

  it("includes sub-agent (sidechain) messages and skips synthetic ones", () => {
    const lines = [
      JSON.stringify({
        type: "assistant",
        message: { id: "a", model: "claude-opus-4-6", usage: { input_tokens: 1, output_tokens: 2 } },
      }),
      JSON.stringify({
        type: "assistant",
        isSidechain: true,
        message: { id: "b", model: "claude-haiku-4-5", usage: { input_tokens: 3, output_tokens: 4 } },
      }),
      JSON.stringify({
        type: "assistant",
        message: { id: "c", model: "<synthetic>", usage: { input_tokens: 0, output_tokens: 0 } },
      }),
      "not json",
    ];
    const r = usageOfLines(lines);
    expect(r.messages).toBe(2);
    expect(r.usage.output_tokens).toBe(6);
    expect(Object.keys(r.model_usage).sort()).toEqual(["claude-haiku-4-5", "claude-opus-4-6"]);
  });

  it("splits cache writes into 5-minute and 1-hour, treating an unsplit total as 5-minute", () => {
    expect(parseUsage({ cache_creation_input_tokens: 700 })).toMatchObject({
      cache_creation_5m_input_tokens: 700,
      cache_creation_1h_input_tokens: 0,
    });
    expect(
      parseUsage({
        cache_creation_input_tokens: 700,
        cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 500 },
      }),
    ).toMatchObject({
      cache_creation_input_tokens: 700,
      cache_creation_5m_input_tokens: 200,
      cache_creation_1h_input_tokens: 500,
    });
  });

  it("reads one turn's usage from the transcript's appended bytes", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/a");
    t.turn("first", "one", { usage: { input_tokens: 1000, output_tokens: 1000 } });
    const offset = statSync(t.path).size;
    t.user("second").assistant(
      [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
      { usage: { input_tokens: 7, output_tokens: 9 } },
    );
    const r = await readTurnUsage(t.path, offset);
    expect(r).toMatchObject({ messages: 1, usage: { input_tokens: 7, output_tokens: 9 }, end: statSync(t.path).size });
  });
});

describe("the index's usage", () => {
  it("counts streamed messages once and sidechain messages too, in list, get and cost", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/a");
    t.user("build it").assistant(
      [
        { type: "text", text: "ok" },
        { type: "tool_use", name: "Bash", input: { command: "make" } },
      ],
      { id: "m1", usage: U },
    );
    t.user("sub task", { sidechain: true }).assistant("sub done", {
      id: "m2",
      model: "claude-haiku-4-5-20251001",
      usage: { input_tokens: 3, output_tokens: 4 },
      sidechain: true,
    });
    // A newer Claude Code keeps sub-agents in <session>/subagents/*.jsonl.
    const sub = join(dirs.configDir, "projects", "-w-a", t.sessionId, "subagents");
    mkdirSync(sub, { recursive: true });
    writeFileSync(
      join(sub, "agent-1.jsonl"),
      JSON.stringify({
        type: "assistant",
        isSidechain: true,
        sessionId: t.sessionId,
        message: { id: "m3", model: "claude-haiku-4-5-20251001", usage: { input_tokens: 5, output_tokens: 6 } },
      }) + "\n",
    );
    history = new History({ stateDir: dirs.stateDir, configDir: dirs.configDir, mode: "inline", syncOnOpen: false });
    await history.sync();
    const c = history.listConversations().conversations[0];
    expect(c?.usage).toMatchObject({ input_tokens: 108, output_tokens: 60, cache_read_input_tokens: 5000 });
    const page = history.getConversation({ claude_session_id: t.sessionId });
    expect(page.conversation.model_usage["claude-haiku-4-5-20251001"]).toMatchObject({ input_tokens: 8, output_tokens: 10 });
    expect(page.items.map((i) => i.role)).toEqual(["user", "assistant"]); // sub-agent text is not part of the conversation
    const byModel = history.usage({ by: "model" });
    expect(byModel.total.messages).toBe(3);
    expect(byModel.rows.map((r) => r.key).sort()).toEqual(["claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929"]);
  });
});

describe("prices", () => {
  it("prices a known model from the dated table", () => {
    expect(PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const u = parseUsage({
      input_tokens: 1_000_000,
      output_tokens: 1_000_000,
      cache_creation_input_tokens: 2_000_000,
      cache_creation: { ephemeral_5m_input_tokens: 1_000_000, ephemeral_1h_input_tokens: 1_000_000 },
      cache_read_input_tokens: 1_000_000,
    });
    // Sonnet 4.5: $3 in, $15 out, $3.75 5m write, $6 1h write, $0.30 read.
    expect(costUsd(u, "claude-sonnet-4-5-20250929")).toBeCloseTo(3 + 15 + 3.75 + 6 + 0.3, 6);
    // Opus 5.5: $4 in, $20 out, $5 / $8 cache writes, $0.20 cache reads (0.05× input).
    expect(costUsd(u, "claude-opus-5-5[1m]")).toBeCloseTo(4 + 20 + 5 + 8 + 0.2, 6);
    expect(canonicalModel("claude-opus-4-1@20250805")).toBe("claude-opus-4-1");
    expect(canonicalModel("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe("claude-sonnet-4-5");
  });

  it("gives null with a note for a model not in the table, never a guess", () => {
    const u = parseUsage({ input_tokens: 1000, output_tokens: 1000 });
    expect(costUsd(u, "claude-sonnet-4-7")).toBeNull();
    expect(costUsd(u, "gpt-5")).toBeNull();
    // Sonnet 5.5 (conflicting cache-read rates) and Haiku 5.5 (priced by prompt length) are left unpriced on purpose.
    expect(costUsd(u, "claude-sonnet-5-5")).toBeNull();
    expect(costUsd(u, "claude-haiku-5-5")).toBeNull();
    const c = costOf(u, "claude-experimental-9");
    expect(c.cost_usd).toBeNull();
    expect(c.note).toContain("claude-experimental-9");
    const mixed = costOfModels({ "claude-haiku-4-5": u, "claude-experimental-9": u });
    expect(mixed.cost_usd).toBeCloseTo((1000 * 1 + 1000 * 5) / 1e6, 9);
    expect(mixed.unpriced_models).toEqual(["claude-experimental-9"]);
    expect(costOfModels({ "claude-experimental-9": u }).cost_usd).toBeNull();
  });
});

/**
 * src/claude/transcript-line.ts, the one parser of Claude's transcript lines, on lines the real CLI wrote
 * (tests/fixtures/transcripts/: Claude Code 2.1.197 against the local mock API — a Bash tool call allowed, and a
 * session whose replies were local `<synthetic>` notices with a meta prompt) and on odd input.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  hasTextBlock,
  isPrompt,
  messageUsageOf,
  parseTranscriptLine,
  type TranscriptLine,
} from "../../src/claude/transcript-line.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/transcripts");

function lines(name: string): TranscriptLine[] {
  return readFileSync(join(FIXTURES, name), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parseTranscriptLine(l)!);
}

describe("a transcript line, parsed", () => {
  it("reads a real session with a tool call: the prompt, the streamed reply, the tool result, system lines", () => {
    const ls = lines("tool-allow-2.1.197.jsonl");
    expect(ls.every((l) => l !== undefined)).toBe(true);
    expect(ls.map((l) => l.kind)).toEqual([
      "other",
      "other",
      "other",
      "other",
      "user",
      "other",
      "other",
      "assistant",
      "assistant",
      "other",
      "user",
      "assistant",
      "system",
      "system",
      "other",
    ]);
    const prompt = ls[4]!;
    expect(prompt).toMatchObject({
      kind: "user",
      content: "MOCK_BASH:touch allowed.txt",
      promptId: "b297c3ea-4190-4e5b-b299-fa6c003d5abe",
      uuid: "63e49b05-90ab-4131-80bd-7aefcf92f924",
      timestamp: "2026-11-25T01:02:10.480Z",
      cwd: "/tmp/cs-test-YoASnm/work/allow",
      sidechain: false,
      meta: false,
    });
    expect(isPrompt(prompt)).toBe(true);

    const [text, call] = [ls[7]!, ls[8]!];
    expect(text).toMatchObject({
      kind: "assistant",
      messageId: "msg_mock_3b239c4259dfd15be43cb4b2",
      model: "claude-opus-4-8",
      content: [{ type: "text", text: "MOCK: running a command." }],
    });
    expect(call).toMatchObject({
      kind: "assistant",
      messageId: "msg_mock_3b239c4259dfd15be43cb4b2",
      content: [{ type: "tool_use", name: "Bash" }],
    });
    expect(hasTextBlock(text)).toBe(true);
    expect(hasTextBlock(call)).toBe(false);
    expect(messageUsageOf(text)).toEqual({
      message_id: "msg_mock_3b239c4259dfd15be43cb4b2",
      model: "claude-opus-4-8",
      sidechain: false,
      timestamp: "2026-11-25T01:02:10.981Z",
      usage: {
        input_tokens: 22151,
        output_tokens: 21,
        cache_creation_input_tokens: 0,
        cache_creation_5m_input_tokens: 0,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });

    const result = ls[10]!;
    expect(result).toMatchObject({ kind: "user", content: [{ type: "tool_result" }] });
    expect(isPrompt(result)).toBe(false);
    expect(ls[12]).toMatchObject({ kind: "system", subtype: "stop_hook_summary" });
    expect(ls[13]).toMatchObject({ kind: "system", subtype: "turn_duration" });
    expect(ls[0]).toMatchObject({ kind: "other", type: "ai-title" });
    expect(ls[5]).toMatchObject({ kind: "other", type: "attachment" });
  });

  it("a meta prompt is not a prompt, and a <synthetic> reply has no billable usage", () => {
    const ls = lines("synthetic-meta-2.1.197.jsonl");
    const users = ls.filter((l) => l.kind === "user");
    expect(users.map((u) => [u.meta, isPrompt(u)])).toEqual([
      [false, true],
      [true, false],
      [false, true],
    ]);
    const replies = ls.filter((l) => l.kind === "assistant");
    expect(replies).toHaveLength(3);
    expect(replies.every((r) => r.kind === "assistant" && r.model === "<synthetic>" && r.usage !== undefined)).toBe(true);
    expect(replies.map((r) => messageUsageOf(r))).toEqual([undefined, undefined, undefined]);
  });

  it("reads sidechain flags, summaries, titles and compact summaries", () => {
    const side = parseTranscriptLine(
      JSON.stringify({
        type: "assistant",
        isSidechain: true,
        message: { id: "m", model: "claude-haiku-4-5", usage: { input_tokens: 3 } },
      }),
    )!;
    expect(messageUsageOf(side)).toMatchObject({ sidechain: true, model: "claude-haiku-4-5", usage: { input_tokens: 3 } });
    expect(parseTranscriptLine(JSON.stringify({ type: "summary", summary: "Fixing the build", leafUuid: "u1" }))).toMatchObject({
      kind: "summary",
      summary: "Fixing the build",
      leafUuid: "u1",
    });
    expect(parseTranscriptLine(JSON.stringify({ type: "custom-title", customTitle: "mine" }))).toMatchObject({
      kind: "custom-title",
      title: "mine",
    });
    const compact = parseTranscriptLine(
      JSON.stringify({
        type: "user",
        isCompactSummary: true,
        message: { role: "user", content: "This session is being continued…" },
      }),
    )!;
    expect(compact).toMatchObject({ kind: "user", compactSummary: true });
    expect(isPrompt(compact)).toBe(false);
  });

  it("takes anything without throwing: not JSON, not an object, wrong field types", () => {
    expect(parseTranscriptLine("not json")).toBeUndefined();
    expect(parseTranscriptLine('{"type":"assistant"')).toBeUndefined();
    expect(parseTranscriptLine("null")).toBeUndefined();
    expect(parseTranscriptLine("[1,2]")).toBeUndefined();
    expect(parseTranscriptLine(JSON.stringify({ type: "user", message: "hi" }))).toMatchObject({ kind: "other", type: "user" });
    const odd = parseTranscriptLine(
      JSON.stringify({
        type: "assistant",
        isSidechain: "yes",
        timestamp: 5,
        message: {
          id: 7,
          model: null,
          usage: { input_tokens: -4, output_tokens: "9" },
          content: [null, 3, { type: "text", text: 1 }, { type: "tool_use", name: 2 }],
        },
      }),
    )!;
    expect(odd).toEqual({
      kind: "assistant",
      sidechain: false,
      meta: false,
      compactSummary: false,
      content: [{ type: "other" }, { type: "tool_use" }],
      usage: expect.objectContaining({ input_tokens: 0, output_tokens: 0 }),
    });
    expect(messageUsageOf(odd)).toBeUndefined();
    expect(parseTranscriptLine(JSON.stringify({ type: "assistant", message: { id: "m", usage: {} } }))!).toSatisfy(
      (l: TranscriptLine) => messageUsageOf(l)?.model === "unknown",
    );
  });
});

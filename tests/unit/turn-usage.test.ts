/**
 * A turn's usage as the session layer reads it at the turn's end (src/claude/turn-usage.ts): streamed lines of one
 * message count once, sidechain lines and sub-agent files count, a prompt queued mid-turn is not charged the
 * turn before it, and the totals count from where counting stood.
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readTurn, sizes, transcriptFiles } from "../../src/claude/turn-usage.js";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";

let dirs: Dirs;
afterEach(() => dirs?.cleanup());

const U = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

describe("a turn's usage from the transcripts", () => {
  it("counts a streamed reply written as several lines once, with sidechain and sub-agent usage", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/turn");
    t.turn("earlier", "before", { usage: U(1000, 1000) });
    const start = sizes(transcriptFiles(t.path));
    t.user("build it").assistant(
      [
        { type: "text", text: "on it" },
        { type: "tool_use", name: "Task", input: { prompt: "x" } },
        { type: "text", text: "done" },
      ],
      { id: "m1", usage: U(100, 50) },
    );
    t.user("sub task", { sidechain: true }).assistant("sub done", {
      id: "m2",
      model: "claude-haiku-4-5-20251001",
      usage: U(3, 4),
      sidechain: true,
    });
    const sub = join(dirs.configDir, "projects", "-w-turn", t.sessionId, "subagents");
    mkdirSync(sub, { recursive: true });
    writeFileSync(
      join(sub, "agent-1.jsonl"),
      JSON.stringify({
        type: "assistant",
        isSidechain: true,
        message: { id: "m3", model: "claude-haiku-4-5-20251001", usage: U(5, 6) },
      }) + "\n",
    );
    const files = transcriptFiles(t.path);
    expect(files).toHaveLength(2);
    const r = await readTurn(t.path, files, start, start);
    expect(r.turn.messages).toBe(3);
    expect(r.turn.usage).toMatchObject({ input_tokens: 108, output_tokens: 60 });
    expect(r.turn.model_usage["claude-haiku-4-5-20251001"]).toMatchObject({ input_tokens: 8, output_tokens: 10 });
    expect(r.reply).toBe(true);
    expect(r.total.usage).toEqual(r.turn.usage);
    expect(r.ends[t.path]).toBe(statSync(t.path).size);
  });

  it("a prompt queued during a turn is charged from its own prompt line, and not the next one's", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/queued");
    const counted = sizes([t.path]);
    t.user("first").assistant("working", { usage: U(10, 1) });
    const queuedAt = sizes([t.path]); // the second prompt is typed while the first turn still runs
    t.assistant("first done", { usage: U(20, 2) });
    // Until the second prompt's line is written, the turn has nothing of its own: the first reply is not its reply.
    const unwritten = await readTurn(t.path, [t.path], queuedAt, counted);
    expect(unwritten.turn.messages).toBe(0);
    expect(unwritten.reply).toBe(false);
    t.user("second").assistant("second done", { usage: U(30, 3) });
    t.user("third").assistant("third done", { usage: U(40, 4) });
    const second = await readTurn(t.path, [t.path], queuedAt, counted);
    expect(second.turn.usage).toMatchObject({ input_tokens: 30, output_tokens: 3 });
    expect(second.total.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
    // Without a prompt line after where the turn began and without a chain to an earlier prompt (an older layout),
    // everything after it counts.
    const tail = sizes([t.path]);
    t.assistant("no prompt line", { usage: U(7, 7), parent: null });
    expect((await readTurn(t.path, [t.path], tail, tail)).turn.usage).toMatchObject({ input_tokens: 7, output_tokens: 7 });
  });

  it("the turn before a queued prompt whose reply line lands after the queued prompt's line: each turn is charged its own replies", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/late-reply");
    const counted = sizes([t.path]);
    const firstAt = sizes([t.path]);
    t.user("first").assistant("working", { usage: U(10, 1) });
    const working = t.lastUuid!;
    const queuedAt = sizes([t.path]); // the second prompt is typed while the first turn still runs
    // Claude Code writes the first turn's last reply line 25–80 ms after its Stop hook; the queued prompt, which
    // starts at Stop and follows that reply in the conversation, can land in the file first.
    const late = randomUUID();
    t.user("second", { parent: late });
    const second = t.lastUuid!;
    const early = await readTurn(t.path, [t.path], queuedAt, counted);
    expect(early.turn.messages).toBe(0);
    t.assistant("first done", { usage: U(20, 2), uuid: late, parent: working });
    // Not there yet: the second turn has no reply of its own (the first turn's does not count).
    const waiting = await readTurn(t.path, [t.path], queuedAt, counted);
    expect(waiting.turn.messages).toBe(0);
    expect(waiting.reply).toBe(false);
    t.assistant("second done", { usage: U(30, 3), parent: second });
    t.user("third").assistant("third done", { usage: U(40, 4) });
    const r = await readTurn(t.path, [t.path], queuedAt, counted);
    expect(r.turn.usage).toMatchObject({ input_tokens: 30, output_tokens: 3 });
    expect(r.reply).toBe(true);
    expect(r.total.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
    // The first turn keeps its late reply although the second prompt's line is above it.
    const f = await readTurn(t.path, [t.path], firstAt, counted);
    expect(f.turn.usage).toMatchObject({ input_tokens: 30, output_tokens: 3 });
  });

  it("a prompt queued before the turn ahead of it wrote its prompt line is found by its prompt id, not by position", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/queued-early");
    const queuedAt = sizes([t.path]); // the transcript does not exist yet when the second prompt is typed
    // Nothing of the second turn written yet: the first turn's lines are not its lines.
    t.user("first", { promptId: "p1" }).assistant("first done", { usage: U(20, 2) });
    const before = await readTurn(t.path, [t.path], queuedAt, queuedAt, "p2");
    expect(before.turn.messages).toBe(0);
    expect(before.reply).toBe(false);
    t.user("second", { promptId: "p2" }).assistant("second done", { usage: U(30, 3) });
    const r = await readTurn(t.path, [t.path], queuedAt, queuedAt, "p2");
    expect(r.turn.usage).toMatchObject({ input_tokens: 30, output_tokens: 3 });
    expect(r.reply).toBe(true);
    expect(r.total.usage).toMatchObject({ input_tokens: 50, output_tokens: 5 });
    expect((await readTurn(t.path, [t.path], queuedAt, queuedAt, "p1")).turn.usage).toMatchObject({
      input_tokens: 20,
      output_tokens: 2,
    });
  });
});

describe("a fork's copied history", () => {
  it("ends after the last line stamped before the fork's start", async () => {
    const { copiedHistoryEnd } = await import("../../src/claude/turn-usage.js");
    const dir = (await import("node:fs")).mkdtempSync(join((await import("node:os")).tmpdir(), "cs-fork-"));
    const f = join(dir, "fork.jsonl");
    const line = (ts: string | undefined, n: number) =>
      JSON.stringify({ type: "user", n, ...(ts ? { timestamp: ts } : {}) }) + "\n";
    // A headless fork writes bookkeeping lines of its own (stamped later, or not at all) above the copy.
    const copied =
      line(undefined, 0) +
      line("2026-01-01T00:00:05.500Z", 0) +
      line("2026-01-01T00:00:00.000Z", 1) +
      line(undefined, 2) +
      line("2026-01-01T00:00:01.000Z", 3);
    writeFileSync(f, copied + line("2026-01-01T00:00:05.000Z", 4) + line("2026-01-01T00:00:06.000Z", 5));
    expect(await copiedHistoryEnd(f, "2026-01-01T00:00:05.000Z")).toBe(Buffer.byteLength(copied));
    expect(await copiedHistoryEnd(f, "2025-12-31T00:00:00.000Z")).toBe(0);
    expect(await copiedHistoryEnd(join(dir, "none.jsonl"), "2026-01-01T00:00:05.000Z")).toBe(0);
    // The parent's last reply written (and stamped) after the fork was asked for, and copied all the same: its API
    // message is the parent's, so it is history too; the fork's own reply (another message id) is not.
    const reply = (ts: string, id: string) =>
      JSON.stringify({
        type: "assistant",
        timestamp: ts,
        message: {
          id,
          model: "claude-opus-4-8",
          role: "assistant",
          content: [{ type: "text", text: "x" }],
          usage: { input_tokens: 1, output_tokens: 10 },
        },
      }) + "\n";
    const parent = join(dir, "parent.jsonl");
    writeFileSync(parent, line("2026-01-01T00:00:00.000Z", 1) + reply("2026-01-01T00:00:05.200Z", "msg_parent"));
    const fork = join(dir, "fork2.jsonl");
    const history = line("2026-01-01T00:00:00.000Z", 1) + reply("2026-01-01T00:00:05.200Z", "msg_parent");
    writeFileSync(fork, history + line("2026-01-01T00:00:06.000Z", 2) + reply("2026-01-01T00:00:06.500Z", "msg_fork"));
    expect(await copiedHistoryEnd(fork, "2026-01-01T00:00:05.000Z")).toBe(Buffer.byteLength(line("2026-01-01T00:00:00.000Z", 1)));
    expect(await copiedHistoryEnd(fork, "2026-01-01T00:00:05.000Z", parent)).toBe(Buffer.byteLength(history));
  });
});

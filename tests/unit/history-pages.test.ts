import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { History } from "../../src/history/history.js";
import { isoOfMs } from "../../src/history/rows.js";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";

let dirs: Dirs;
let history: History;
let t: Transcript;

beforeAll(async () => {
  dirs = tempDirs();
  t = new Transcript(dirs.configDir, "/w/pages");
  for (let i = 1; i <= 5; i++) t.turn(`question ${i}`, `answer ${i}`);
  t.user("run it")
    .assistant([
      { type: "text", text: "Running." },
      { type: "tool_use", name: "Bash", input: { command: "npm test" } },
    ])
    .toolResult("ok")
    .assistant("All green.");
  history = new History({ stateDir: dirs.stateDir, configDir: dirs.configDir, mode: "inline", syncOnOpen: false });
  await history.sync();
});

afterAll(async () => {
  await history.close();
  dirs.cleanup();
});

const texts = (p: { items: { text: string }[] }) => p.items.map((i) => i.text);

describe("get_conversation", () => {
  it("pages forward from the start and backward from the end", () => {
    const p1 = history.getConversation({ claude_session_id: t.sessionId, limit: 4 });
    expect(texts(p1)).toEqual(["question 1", "answer 1", "question 2", "answer 2"]);
    expect(p1.prev_cursor).toBeNull();
    expect(p1.has_more_after).toBe(true);
    const p2 = history.getConversation({ claude_session_id: t.sessionId, limit: 4, cursor: p1.next_cursor ?? "" });
    expect(texts(p2)).toEqual(["question 3", "answer 3", "question 4", "answer 4"]);
    const back = history.getConversation({ claude_session_id: t.sessionId, limit: 4, cursor: p2.prev_cursor ?? "" });
    expect(texts(back)).toEqual(texts(p1));

    const end = history.getConversation({ claude_session_id: t.sessionId, limit: 3, from: "end" });
    expect(texts(end)).toEqual(["run it", "Running.", "All green."]);
    expect(end.has_more_after).toBe(false);
    expect(end.items[1]?.tools).toEqual([{ name: "Bash", input: "npm test" }]); // one item for the streamed message, tool summarised
    const before = history.getConversation({ claude_session_id: t.sessionId, limit: 3, cursor: end.prev_cursor ?? "" });
    expect(texts(before)).toEqual(["answer 4", "question 5", "answer 5"]);
  });

  it("continues from next_cursor with what was appended later", async () => {
    const all = history.getConversation({ claude_session_id: t.sessionId, limit: 100 });
    expect(all.has_more_after).toBe(false);
    t.turn("one more", "sure");
    await history.update([t.path]);
    const more = history.getConversation({ claude_session_id: t.sessionId, cursor: all.next_cursor ?? "" });
    expect(texts(more)).toEqual(["one more", "sure"]);
  });

  it("cuts long messages and reports unknown ids as SESSION_NOT_FOUND", () => {
    const p = history.getConversation({ claude_session_id: t.sessionId, limit: 1, max_chars: 100 });
    expect(p.items[0]?.truncated).toBeUndefined();
    expect(() => history.getConversation({ claude_session_id: "no-such-id" })).toThrow(
      expect.objectContaining({ code: "SESSION_NOT_FOUND" }),
    );
  });
});

describe("times in answers", () => {
  it("isoOfMs writes what toISOString writes, for leap days, ends of years and random times", () => {
    const fixed = [
      0,
      1,
      999,
      951_782_400_000,
      951_868_799_999,
      1_709_164_800_000,
      1_709_251_199_999,
      4_102_444_800_000,
      253_402_300_799_999,
      Date.parse("2026-11-23T12:34:56.789Z"),
    ];
    let seed = 12_345;
    const random = Array.from(
      { length: 20_000 },
      () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), Math.floor((seed / 2 ** 31) * 253_402_300_799_999)),
    );
    const wrong = [...fixed, ...random].filter((ms) => isoOfMs(ms) !== new Date(ms).toISOString());
    expect(wrong.map((ms) => [ms, isoOfMs(ms), new Date(ms).toISOString()])).toEqual([]);
    // Outside 1970–9999 (and fractions) it takes the Date path.
    for (const ms of [-1, -86_400_000 * 400, 253_402_300_800_000, 1.5]) expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
  });
});

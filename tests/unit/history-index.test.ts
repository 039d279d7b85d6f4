import { appendFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { History } from "../../src/history/history.js";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";

let dirs: Dirs;
let history: History | undefined;
const open = (syncOnOpen = false) =>
  (history = new History({ stateDir: dirs.stateDir, configDir: dirs.configDir, mode: "inline", syncOnOpen }));

afterEach(async () => {
  await history?.close();
  history = undefined;
  dirs?.cleanup();
});

describe("transcript index", () => {
  it("lists conversations newest first with cwd, title, turns and models", async () => {
    dirs = tempDirs();
    const old = new Transcript(dirs.configDir, "/w/old", undefined, "2026-01-01T00:00:00Z").turn(
      "Fix the flaky login test",
      "Fixed.",
    );
    const mid = new Transcript(dirs.configDir, "/w/mid", undefined, "2026-02-01T00:00:00Z")
      .turn("Add pagination", "Added.")
      .summary("Pagination for the API");
    const named = new Transcript(dirs.configDir, "/w/new", undefined, "2026-03-01T00:00:00Z")
      .turn("hello", "hi")
      .raw({ type: "custom-title", customTitle: "My named chat" });
    await open().sync();
    const r = history!.listConversations();
    expect(r.conversations.map((c) => c.claude_session_id)).toEqual([named.sessionId, mid.sessionId, old.sessionId]);
    expect(r.conversations.map((c) => c.title)).toEqual(["My named chat", "Pagination for the API", "Fix the flaky login test"]);
    expect(r.conversations[2]).toMatchObject({
      cwd: "/w/old",
      turns: 1,
      models: ["claude-sonnet-4-5-20250929"],
      first_activity: "2026-01-01T00:01:00.000Z",
    });
    expect(r.total).toBe(3);
    expect(r.indexing).toBe(false);
    const onlyMid = history!.listConversations({ since: "2026-01-15", until: "2026-02-15" });
    expect(onlyMid.conversations.map((c) => c.claude_session_id)).toEqual([mid.sessionId]);
    expect(history!.listConversations({ cwd: "/w/old" }).total).toBe(1);
  });

  it("pages the list with a cursor", async () => {
    dirs = tempDirs();
    const ids = Array.from(
      { length: 5 },
      (_, i) =>
        new Transcript(dirs.configDir, "/w/p", undefined, `2026-01-0${i + 1}T00:00:00Z`).turn(`task ${i}`, "ok").sessionId,
    ).reverse();
    await open().sync();
    const a = history!.listConversations({ limit: 2 });
    const b = history!.listConversations({ limit: 2, cursor: a.next_cursor ?? "" });
    const c = history!.listConversations({ limit: 2, cursor: b.next_cursor ?? "" });
    expect([...a.conversations, ...b.conversations, ...c.conversations].map((x) => x.claude_session_id)).toEqual(ids);
    expect(c.next_cursor).toBeNull();
    expect(() => history!.listConversations({ cursor: "garbage" })).toThrow(/cursor/);
  });

  it("finds a turn appended after an incremental update, reading only the new bytes", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/inc").turn("first question", "first answer");
    for (let i = 0; i < 20; i++) new Transcript(dirs.configDir, `/w/other${i}`).turn(`other ${i}`, "x");
    await open().sync();
    expect(history!.searchConversations({ query: "zebrafish" }).results).toHaveLength(0);
    const before = statSync(t.path).size;
    t.turn("what about the zebrafish genome", "The zebrafish genome is small.");
    const st = await history!.update([t.path]);
    expect(st.files_read).toBe(1);
    expect(st.bytes_read).toBe(statSync(t.path).size - before);
    const hits = history!.searchConversations({ query: "zebrafish genome" }).results;
    expect(hits.map((h) => h.claude_session_id)).toEqual([t.sessionId]);
    expect(history!.listConversations({ cwd: "/w/inc" }).conversations[0]?.turns).toBe(2);
  });

  it("leaves a line that is still being written for the next update", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/partial").turn("start", "ok");
    await open().sync();
    const line = JSON.stringify({
      type: "user",
      uuid: "u-late",
      timestamp: "2026-03-01T12:00:00Z",
      message: { role: "user", content: "a late walrus question" },
    });
    appendFileSync(t.path, line.slice(0, 40));
    await history!.update([t.path]);
    expect(history!.searchConversations({ query: "walrus" }).results).toHaveLength(0);
    appendFileSync(t.path, line.slice(40) + "\n");
    await history!.update([t.path]);
    expect(history!.searchConversations({ query: "walrus" }).results).toHaveLength(1);
  });

  it("reads a transcript again when it was replaced or truncated, and forgets a deleted one", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/r").turn("about penguins", "penguins swim", {
      usage: { input_tokens: 50, output_tokens: 50 },
    });
    const gone = new Transcript(dirs.configDir, "/w/gone").turn("about ostriches", "they run");
    await open().sync();
    writeFileSync(t.path, readFileSync(t.path, "utf8").split("\n")[0] + "\n"); // the prompt only: shorter than what was read
    rmSync(gone.path);
    const st = await history!.sync();
    expect(st.files_removed).toBe(1);
    expect(history!.searchConversations({ query: "penguins swim" }).results).toHaveLength(0);
    expect(history!.searchConversations({ query: "about penguins" }).results).toHaveLength(1);
    expect(history!.searchConversations({ query: "ostriches" }).results).toHaveLength(0);
    expect(history!.listConversations().conversations.map((c) => [c.claude_session_id, c.usage.output_tokens])).toEqual([
      [t.sessionId, 0],
    ]);
  });

  it("rebuilds an index file that is corrupt", async () => {
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/c").turn("the capybara question", "capybaras are large");
    await open().sync();
    await history!.close();
    const db = join(dirs.stateDir, "history.sqlite");
    expect(existsSync(db)).toBe(true);
    const size = statSync(db).size;
    writeFileSync(db, Buffer.alloc(size, 0x5a)); // garbage over the whole file, header included
    rmSync(db + "-wal", { force: true });
    rmSync(db + "-shm", { force: true });
    const st = await open().sync();
    expect(st.rebuilt).toBe(true);
    expect(history!.searchConversations({ query: "capybara" }).results.map((r) => r.claude_session_id)).toEqual([t.sessionId]);
  });

  it("builds a missing index from scratch, answering at once with indexing: true while it builds", async () => {
    dirs = tempDirs();
    for (let i = 0; i < 30; i++)
      new Transcript(dirs.configDir, `/w/m${i}`).turn(`question number ${i} about llamas`, "answer ".repeat(20000));
    open(true);
    const early = history!.listConversations();
    expect(early.indexing).toBe(true);
    expect(early.conversations.length).toBeLessThan(30);
    await history!.sync();
    const done = history!.searchConversations({ query: "llamas", limit: 100 });
    expect(done.indexing).toBe(false);
    expect(done.results).toHaveLength(30);
    expect(done.complete_at).not.toBeNull();
  });
});

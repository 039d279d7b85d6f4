/**
 * The history index in its worker thread, as the built package runs it (needs `npm run build`, which
 * `npm test` does first).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";
import { until } from "../helpers/wait.js";

const built = join(import.meta.dirname, "../../dist/history/history.js");

let dirs: Dirs;
afterEach(() => dirs?.cleanup());

describe("history index in a worker thread", () => {
  it("answers at once with indexing: true while the worker builds, then everything", async () => {
    expect(existsSync(built), "dist/history/history.js is missing: run npm run build").toBe(true);
    const { History } = (await import(built)) as typeof import("../../src/history/history.js");
    dirs = tempDirs();
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++)
      ids.add(
        new Transcript(dirs.configDir, `/w/p${i % 4}`).turn(`学習データの確認 ${i}`, "long answer ".repeat(5000)).sessionId,
      );
    const h = new History({ stateDir: dirs.stateDir, configDir: dirs.configDir, mode: "worker" });
    try {
      const early = h.searchConversations({ query: "学習データ", limit: 100 });
      expect(early.indexing).toBe(true);
      await h.sync();
      const done = h.searchConversations({ query: "学習データ", limit: 100 });
      expect(done.indexing).toBe(false);
      expect(new Set(done.results.map((r) => r.claude_session_id))).toEqual(ids);
      const t = new Transcript(dirs.configDir, "/w/p0").turn("後から追加した質問", "ok");
      await h.update([t.path]);
      expect(h.searchConversations({ query: "後から追加" }).results.map((r) => r.claude_session_id)).toEqual([t.sessionId]);
    } finally {
      await h.close();
    }
  });

  it("the thread exists only while there is work: ended when idle, started again for the next update", async () => {
    const { OnDemandWorkerRunner, workerScript } = (await import(
      join(import.meta.dirname, "../../dist/history/runner.js")
    )) as typeof import("../../src/history/runner.js");
    dirs = tempDirs();
    const t = new Transcript(dirs.configDir, "/w/idle").turn("first words", "ok");
    const r = new OnDemandWorkerRunner(
      workerScript()!,
      join(dirs.stateDir, "history.sqlite"),
      dirs.configDir,
      { onReset() {}, onProgress() {} },
      100,
    );
    try {
      expect(r.running).toBe(false);
      expect((await r.sync()).files_read).toBe(1);
      expect(r.running).toBe(true);
      // Ended once idle (100 ms here), without another call.
      await until(() => !r.running, 5000, 20);
      t.turn("second words", "ok");
      expect((await r.sync([t.path])).files_read).toBe(1);
    } finally {
      await r.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { History } from "../../src/history/history.js";
import { parseQuery, snippet } from "../../src/history/search.js";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";

let dirs: Dirs;
let history: History;
const ids: Record<string, string> = {};

beforeAll(async () => {
  dirs = tempDirs();
  const add = (key: string, cwd: string, start: string, prompt: string, reply: string) => {
    ids[key] = new Transcript(dirs.configDir, cwd, undefined, start).turn(prompt, reply).sessionId;
  };
  add(
    "auth",
    "/w/api",
    "2026-01-10T00:00:00Z",
    "The authentication middleware rejects valid tokens",
    "I fixed the token expiry check in the middleware.",
  );
  add("authz", "/w/api", "2026-01-11T00:00:00Z", "Review the authorization rules", "The rules look right.");
  add("pool", "/w/db", "2026-01-12T00:00:00Z", "We have a connection pool leak", "Close the pool in the shutdown hook.");
  add("poolish", "/w/db", "2026-01-13T00:00:00Z", "The pool of connection objects grows", "Cap it at ten.");
  add("latest", "/w/db", "2026-01-14T00:00:00Z", "Upgrade to the latest release", "Done.");
  add("tower", "/w/ja", "2026-02-01T00:00:00Z", "東京タワーの近くで天気予報を確認してください", "明日の天気は晴れです。");
  add("skytree", "/w/ja", "2026-02-02T00:00:00Z", "東京スカイツリーに行きました", "展望台からの眺めが良かったです。");
  add("migrate", "/w/zh", "2026-02-03T00:00:00Z", "请帮我完成数据库迁移脚本", "数据库迁移已经完成了。");
  add("migrate2", "/w/zh", "2026-02-04T00:00:00Z", "数据库的备份和迁移", "备份完成。");
  history = new History({ stateDir: dirs.stateDir, configDir: dirs.configDir, mode: "inline", syncOnOpen: false });
  await history.sync();
});

afterAll(async () => {
  await history.close();
  dirs.cleanup();
});

const find = (query: string, extra: { cwd?: string; since?: string; until?: string } = {}) =>
  history
    .searchConversations({ query, ...extra })
    .results.map((r) => Object.entries(ids).find(([, v]) => v === r.claude_session_id)?.[0]);

describe("search_conversations", () => {
  it("finds English words in any case, and every word must match", () => {
    expect(find("Middleware")).toEqual(["auth"]);
    expect(find("token middleware")).toEqual(["auth"]);
    expect(find("token review")).toEqual([]);
  });

  it("finds a quoted phrase and not the same words apart", () => {
    expect(find('"connection pool"')).toEqual(["pool"]);
    expect(find("connection pool").sort()).toEqual(["pool", "poolish"]);
  });

  it("does not match near-misses", () => {
    expect(find("authentication")).toEqual(["auth"]); // not "authorization"
    expect(find("test")).toEqual([]); // "latest" does not contain the word test
    expect(find("auth").sort()).toEqual(["auth", "authz"]); // a word prefix does
    expect(find("東京タワー")).toEqual(["tower"]); // not 東京スカイツリー
    expect(find("数据库迁移")).toEqual(["migrate"]); // not 数据库的备份和迁移
  });

  it("finds Japanese and Chinese phrases without spaces, short words too", () => {
    expect(find("天気予報")).toEqual(["tower"]);
    expect(find("展望台")).toEqual(["skytree"]);
    expect(find("迁移脚本")).toEqual(["migrate"]);
    expect(find("東京").sort()).toEqual(["skytree", "tower"]); // two characters: below the trigram size
    expect(find("备份")).toEqual(["migrate2"]);
    expect(find("東京 晴れ")).toEqual([]); // in different messages of one conversation: not one hit
  });

  it("marks the match in the snippet, scores hits and says how to resume", () => {
    const r = history.searchConversations({ query: "天気予報" });
    expect(r.results[0]?.snippet).toContain("**天気予報**");
    expect(r.results[0]?.score).toBeGreaterThan(0);
    expect(r.results[0]?.resume).toEqual({ claude_session_id: ids.tower, cwd: "/w/ja" });
    expect(r.indexing).toBe(false);
    const en = history.searchConversations({ query: '"connection pool" leak' }).results[0];
    expect(en?.snippet).toBe("We have a **connection pool** **leak**");
  });

  it("filters by cwd and time", () => {
    expect(find("pool", { cwd: "/w/api" })).toEqual([]);
    expect(find("pool", { cwd: "/w/db" }).sort()).toEqual(["pool", "poolish"]);
    expect(find("pool", { since: "2026-01-13" })).toEqual(["poolish"]);
    expect(find("pool", { until: "2026-01-12T23:59:59Z" })).toEqual(["pool"]);
    expect(() => find("pool", { since: "yesterday-ish" })).toThrow(/not a date/);
  });

  it("parses words and quoted phrases", () => {
    expect(parseQuery(' foo "bar  baz" 東京 foo ')).toEqual([
      { text: "foo", phrase: false },
      { text: "bar baz", phrase: true },
      { text: "東京", phrase: false },
    ]);
    expect(snippet("x".repeat(500) + " needle " + "y".repeat(500), parseQuery("needle"))).toMatch(/^…x+ \*\*needle\*\* y+…$/);
  });
});

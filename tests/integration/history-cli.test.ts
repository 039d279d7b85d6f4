/**
 * The history commands of the CLI over transcripts in the world's HOME (never the user's): history, search,
 * show and cost print tables; bad input is a typed error with a suggestion and exit status 1.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, makeWorld, type World } from "../helpers/harness.js";
import { Transcript } from "../helpers/transcripts.js";

describe("claude-sessions history, search, show, cost", () => {
  let w: World;
  let t: Transcript;
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 30_000, cwd: w.root });
  beforeAll(() => {
    w = makeWorld();
    const config = join(w.home, ".claude");
    t = new Transcript(config, "/w/api").turn("Explain the retry policy of the uploader", "Retries back off exponentially.", {
      model: "claude-opus-4-6",
      usage: { input_tokens: 1_000_000, output_tokens: 0 },
    });
    new Transcript(config, "/w/docs").turn("翻訳の設定ファイルはどこですか", "config/i18n.yaml です。", {
      model: "claude-haiku-4-5-20251001",
      usage: { input_tokens: 1000, output_tokens: 100 },
    });
  });
  afterAll(() => w?.cleanup());

  it("history lists conversations newest first; show prints one", () => {
    const h = cli("history");
    expect(h.status, h.stderr).toBe(0);
    expect(h.stdout).toContain("Explain the retry policy");
    expect(h.stdout).toContain("翻訳の設定ファイル");
    expect(h.stdout).toMatch(/2 of 2/);
    const s = cli("show", t.sessionId);
    expect(s.status, s.stderr).toBe(0);
    expect(s.stdout).toContain("Retries back off exponentially.");
  });

  it("search finds English and Japanese phrases, marks the match and says how to resume", () => {
    const en = cli("search", "retry", "policy");
    expect(en.status, en.stderr).toBe(0);
    expect(en.stdout).toContain("**retry** **policy**");
    expect(en.stdout).toContain(`resume_session {claude_session_id: "${t.sessionId}", cwd: "/w/api"}`);
    expect(cli("search", "設定ファイル").stdout).toContain("/w/docs");
    expect(cli("search", "retry policies").stdout).toMatch(/^no matches/);
  });

  it("cost groups by model with the price table's date", () => {
    const c = cli("cost", "--by", "model");
    expect(c.status, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/claude-opus-4-6\s+1\s+1\.0M\s+0\s+\$5\.0000/);
    expect(c.stdout).toMatch(/prices as of \d{4}-\d{2}-\d{2}/);
  });

  it("bad input is a typed error with a suggestion, never a crash", () => {
    const by = cli("cost", "--by", "week");
    expect(by.status).toBe(1);
    expect(by.stderr).toContain("INVALID_ARGUMENT: --by must be session, cwd, model or day");
    const none = cli("show", "00000000-0000-0000-0000-000000000000");
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("SESSION_NOT_FOUND");
    expect(none.stderr).toContain("list_conversations");
    const empty = cli("search");
    expect(empty.status).toBe(1);
    expect(empty.stderr).toContain("claude-sessions search database migration");
  });
});

/**
 * move_session with the real CLI (issue 36, "Done when"): a tmux session of the coordinator's machine talks to the
 * mock API, is moved to a node (the built server in a world of its own, its HOME prepared for the same mock, its key
 * read from a 0600 file, never an argv), and the next prompt there reaches the mock with the earlier messages: the
 * conversation went with it. The coordinator no longer has it or its transcript. With CLAUDE_SESSIONS_WAKE_ANYWHERE, a
 * prompt to a hibernated session on this full machine (MAX_LIVE 1) moves it to the node and wakes it there, the
 * mock seeing the earlier messages, and the live session here is left alone.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareClaudeHome } from "../fixtures/claude-home.js";
import { makeWorld, type Mcp, type World } from "../helpers/harness.js";
import { API_KEY, e2eWorld, REAL_CLAUDE, realClaudeOrSkip, realClaudeVersion, type E2e } from "../helpers/real-claude.js";
import { writeNodesFile } from "../helpers/test-hosts.mjs";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: a session moved to another node continues its conversation", () => {
  let e: E2e;
  let far: World;
  let m: Mcp;

  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["proj"] });
    far = makeWorld({ CLAUDE_PATH: REAL_CLAUDE, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000" });
    const prepared = await prepareClaudeHome({
      home: far.home,
      apiKey: API_KEY,
      trustedDirs: [e.dir("proj")],
      mockUrl: e.mock.url,
      cliVersion: realClaudeVersion() ?? "2.1.330",
    });
    const envFile = join(far.root, "node-env.json");
    writeFileSync(envFile, JSON.stringify({ ...far.env, ...prepared.env, CLAUDE_PATH: REAL_CLAUDE }), { mode: 0o600 });
    e.world.env.CLAUDE_SESSIONS_NODES = writeNodesFile(e.world.root, {
      far: { exec: [process.execPath, join(import.meta.dirname, "..", "helpers", "env-file-node.mjs"), envFile] },
    });
    m = await e.connect();
  });

  afterAll(async () => {
    await m?.close().catch(() => {});
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    far?.cleanup();
    await e?.cleanup();
  });

  it("the mock sees the earlier messages in the first turn on the new node", async () => {
    const s = await m.callOk("start_session", {
      cwd: e.dir("proj"),
      backend: "tmux",
      permission_mode: "default",
      prompt: "the word is osprey",
    });
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 60_000 });
    const before = e.transcriptFile(e.dir("proj"), s.claude_session_id);
    expect(existsSync(before)).toBe(true);
    const moved = await m.callOk("move_session", { session_id: s.session_id, node: "far" }, { timeout: 120_000 });
    expect(moved).toMatchObject({ from: "local", node: "far", status: "hibernated" });
    expect(existsSync(before)).toBe(false);
    expect(
      existsSync(
        join(far.home, ".claude", "projects", e.dir("proj").replace(/[^A-Za-z0-9]/g, "-"), `${s.claude_session_id}.jsonl`),
      ),
    ).toBe(true);
    const r = await m.callOk(
      "send_message",
      { session_id: s.session_id, message: "which word?", timeout_ms: 60_000 },
      { timeout: 120_000 },
    );
    expect(r).toMatchObject({ completed: true, woke: true, response: "MOCK REPLY: which word?", node: "far" });
    expect(e.userTexts(e.requestsWith("which word?")[0]!)).toContain("the word is osprey");
    const rows = (await m.callOk("list_sessions", { status_filter: "all" })).sessions.filter(
      (x) => x.session_id === s.session_id,
    );
    expect(rows.map((x) => x.node ?? "local")).toEqual(["far"]);
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("wake_anywhere: a prompt to a hibernated session on this full machine wakes it on the node, the mock sees the earlier messages", async () => {
    // A coordinator with the setting and MAX_LIVE 1 here: s hibernated, t live (this machine full); the node has room.
    const w = await e.connect({ CLAUDE_SESSIONS_WAKE_ANYWHERE: "1", CLAUDE_SESSIONS_MAX_LIVE: "1" });
    try {
      const start = { cwd: e.dir("proj"), backend: "tmux", permission_mode: "default" } as const;
      const s = await w.callOk("start_session", { ...start, prompt: "the bird is heron" });
      await w.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 60_000 });
      await w.callOk("kill_session", { session_id: s.session_id, hibernate: true });
      const t = await w.callOk("start_session", start);
      const r = await w.callOk(
        "send_message",
        { session_id: s.session_id, message: "which bird?", timeout_ms: 60_000 },
        { timeout: 180_000 },
      );
      expect(r).toMatchObject({ completed: true, woke: true, response: "MOCK REPLY: which bird?", node: "far" });
      expect(e.userTexts(e.requestsWith("which bird?")[0]!)).toContain("the bird is heron");
      const rows = (await w.callOk("list_sessions", { status_filter: "all" })).sessions;
      expect(rows.filter((x) => x.session_id === s.session_id).map((x) => x.node ?? "local")).toEqual(["far"]);
      // This machine made no room: t is still live here.
      expect(rows.find((x) => x.session_id === t.session_id)).toMatchObject({ status: expect.stringMatching(/^(ready|idle)$/) });
      for (const id of [s.session_id, t.session_id]) await w.callOk("kill_session", { session_id: id });
    } finally {
      await w.close();
    }
  }, 300_000);
});

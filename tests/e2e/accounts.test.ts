/**
 * Issue 33's accounts with the real CLI against the mock, on tmux: a session limited on account A (each account a
 * Claude configuration folder of its own, CLAUDE_CONFIG_DIR) continues on account B with the same conversation —
 * `resume_session {account: "B"}` copies the transcript into B's folder, the CLI there resumes it, and the mock
 * sees A's earlier prompts in B's request.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processesIn, until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: a session limited on one account continues on another with its conversation", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({
      dirs: ["acct"],
      serverEnv: { CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "120000", CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0" },
    });
    const dirs: Record<string, string> = {};
    for (const name of ["A", "B"]) {
      const d = join(e.world.root, `config-${name}`);
      mkdirSync(d, { recursive: true, mode: 0o700 });
      // Each folder is a "login" of its own: the CLI reads its .claude.json (onboarding, trust, the approved key) there.
      copyFileSync(join(e.world.home, ".claude.json"), join(d, ".claude.json"));
      if (existsSync(join(e.world.home, ".claude", "settings.json")))
        copyFileSync(join(e.world.home, ".claude", "settings.json"), join(d, "settings.json"));
      dirs[name] = d;
    }
    const file = join(e.world.root, "accounts.json");
    writeFileSync(file, JSON.stringify({ accounts: { A: { config_dir: dirs.A }, B: { config_dir: dirs.B } } }), { mode: 0o600 });
    m = await e.connect({ CLAUDE_SESSIONS_ACCOUNTS: file });
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("limited on A, resumed on B: B's request carries A's conversation", async () => {
    const cwd = e.dir("acct");
    const s = await m.callOk("start_session", { cwd, backend: "tmux", permission_mode: "default", account: "A" });
    await m.callOk("send_message", { session_id: s.session_id, message: "remember the word heliotrope", timeout_ms: 60_000 });
    const limited = "second MOCK_LIMIT:rate:2";
    const r = await m.call("send_message", { session_id: s.session_id, message: limited, timeout_ms: 60_000 });
    expect(r.error?.code, r.text).toBe("LIMITED");
    await until(() => processesIn(cwd).length === 0, 30_000);
    await new Promise((res) => setTimeout(res, 2500));
    const t0 = Date.now();
    await m.callOk("resume_session", { session_id: s.session_id, account: "B" }, { timeout: 90_000 });
    await m.callOk("send_message", { session_id: s.session_id, message: "third on B", timeout_ms: 60_000 });
    console.log(`[e2e accounts] resume on B + one turn: ${Date.now() - t0} ms`);
    const onB = e.requestsWith("third on B");
    expect(onB.length).toBeGreaterThan(0);
    expect(e.userTexts(onB[0]!)).toEqual(expect.arrayContaining(["remember the word heliotrope"]));
    await m.callOk("kill_session", { session_id: s.session_id });
  }, 240_000);
});

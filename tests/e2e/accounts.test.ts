/**
 * Issue 33's accounts with the real CLI against the mock, on tmux: a session limited on account A (each account a
 * Claude configuration folder of its own, CLAUDE_CONFIG_DIR) continues on account B with the same conversation —
 * `resume_session {account: "B"}` copies the transcript into B's folder, the CLI there resumes it, and the mock
 * sees A's earlier prompts in B's request. Then the same without the test's help: a session started with
 * `on_limit: "switch_account"` on A whose prompt hits A's limit (the mock's `MOCK_LIMIT:…:key=<part>` limits A's key
 * only) is continued on B by the server itself, tmux and headless.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processesIn, until, type Mcp } from "../helpers/harness.js";
import { API_KEY, e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

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

/** Account B's key (an api_key_env account): approved in the prepared HOME below; A's key is the e2e world's API_KEY. */
const KEY_B = `sk-ant-api03-e2e-${"b".repeat(60)}-ACCOUNTBKEY987654321`;
/** A part of A's key only: the mock limits the marked prompt for requests carrying it. */
const A_PART = "APPROVEDKEY";

describe.runIf(run)("real claude: switch_account continues a session limited on A on B by itself", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    expect(API_KEY).toContain(A_PART);
    expect(KEY_B).not.toContain(A_PART);
    e = await e2eWorld({
      dirs: ["switch-tmux", "switch-headless"],
      // A's limit (an API key's 429: no reset named) would be waited out for 120 s: only a switch answers sooner.
      // The operator's default is switch_account (the tmux case relies on it); the headless case asks for it itself.
      serverEnv: {
        CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "120000",
        CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0",
        CLAUDE_SESSIONS_ON_LIMIT: "switch_account",
        CS_E2E_KEY_B: KEY_B,
      },
    });
    // A: a config folder of its own (the world's key); B: a key from the server's environment, run in the server's
    // configuration (HOME), which approves B's key as it does A's. So the switch carries the transcript from A's folder.
    const dirA = join(e.world.root, "config-A");
    mkdirSync(dirA, { recursive: true, mode: 0o700 });
    copyFileSync(join(e.world.home, ".claude.json"), join(dirA, ".claude.json"));
    if (existsSync(join(e.world.home, ".claude", "settings.json")))
      copyFileSync(join(e.world.home, ".claude", "settings.json"), join(dirA, "settings.json"));
    const cfgPath = join(e.world.home, ".claude.json");
    const cfg = JSON.parse(readFileSync(cfgPath, "utf8")) as { customApiKeyResponses?: { approved?: string[] } };
    cfg.customApiKeyResponses ??= {};
    cfg.customApiKeyResponses.approved = [...(cfg.customApiKeyResponses.approved ?? []), KEY_B.slice(-20)];
    writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
    const file = join(e.world.root, "accounts.json");
    writeFileSync(file, JSON.stringify({ accounts: { A: { config_dir: dirA }, B: { api_key_env: "CS_E2E_KEY_B" } } }), {
      mode: 0o600,
    });
    m = await e.connect({ CLAUDE_SESSIONS_ACCOUNTS: file });
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  for (const backend of ["tmux", "headless"] as const) {
    const how = backend === "tmux" ? "the operator's CLAUDE_SESSIONS_ON_LIMIT" : "the session's on_limit";
    it(`${backend}, ${how}: the prompt limited on A is answered once on B, with the conversation, with no call from the client`, async () => {
      const cwd = e.dir(`switch-${backend}`);
      const s = await m.callOk("start_session", {
        cwd,
        backend,
        permission_mode: "default",
        account: "A",
        ...(backend === "headless" ? { on_limit: "switch_account" as const } : {}),
      });
      const id = s.session_id;
      const first = `${backend}: remember the word heliotrope`;
      await m.callOk("send_message", { session_id: id, message: first, timeout_ms: 60_000 });
      const limited = `${backend}: second MOCK_LIMIT:rate:600:key=${A_PART}`;
      const r = await m.call("send_message", { session_id: id, message: limited, timeout_ms: 60_000 });
      expect(r.error?.code, r.text).toBe("LIMITED");
      const t0 = Date.now();
      const answer = () => e.requestsWith(limited).filter((q) => q.reply?.status === 200);
      await until(() => answer().length > 0, 90_000, 100);
      const took = Date.now() - t0;
      // Settled on B: idle there, the limit over.
      await until(
        async () => {
          const l = await m.callOk("list_sessions", {});
          const x = l.sessions.find((y) => y.session_id === id);
          return x?.account === "B" && x.status === "idle" && x;
        },
        60_000,
        200,
      );
      console.log(`[e2e accounts] ${backend}: LIMITED on A -> the prompt answered on B: ${took} ms`);
      const asked = e.requestsWith(limited);
      expect(asked.map((q) => q.reply?.status)).toEqual([429, 200]);
      expect(asked[0]!.headers["x-api-key"]).toBe(API_KEY);
      expect(asked[1]!.headers["x-api-key"], "the answer came on B's key").toBe(KEY_B);
      expect(e.userTexts(asked[1]!), "B's request carries the conversation so far").toEqual(expect.arrayContaining([first]));
      // The next prompt goes to B as well, and the limited one was not sent again meanwhile.
      const third = `${backend}: third on B`;
      await m.callOk("send_message", { session_id: id, message: third, timeout_ms: 60_000 });
      expect(e.requestsWith(third).map((q) => q.headers["x-api-key"])).toEqual([KEY_B]);
      expect(e.requestsWith(limited)).toHaveLength(2);
      await m.callOk("kill_session", { session_id: id });
    }, 240_000);
  }
});

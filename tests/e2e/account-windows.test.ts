/**
 * Issue 33, each account's usage windows with the real CLI against the mock, on tmux and headless: a claude.ai login
 * (CLAUDE_CODE_OAUTH_TOKEN, no API key) under an account; the mock answers MOCK_USAGE:<5h>:<7d> with a plan's unified
 * rate-limit headers of an allowed request. The interactive CLI hands them to its status line (the server's, under an
 * account), the headless one to a rate_limit_event: either way the account's windows (used %, resets) are shown by
 * health_check, and list_sessions names each session's account.
 */
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, realClaudeVersion, type E2e } from "../helpers/real-claude.js";
import { readWindows } from "../../src/claude/account-windows.js";

const run = realClaudeOrSkip();

/** Headless 2.1.197 gives no figures of an allowed request (measured: docs/limits.md); 2.1.330 and 2.1.332 do. */
const headlessReports = (() => {
  const [a = 0, b = 0, c = 0] = (realClaudeVersion() ?? "0.0.0").split(".").map(Number);
  return a * 1e6 + b * 1e3 + c >= 2_001_330;
})();

describe.runIf(run)("real claude: an account's 5-hour and weekly windows, as the API reports them", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["tmux", "headless"] });
    const accounts: Record<string, { config_dir: string }> = {};
    for (const name of ["T", "H"]) {
      const d = join(e.world.root, `config-${name}`);
      mkdirSync(d, { recursive: true, mode: 0o700 });
      copyFileSync(join(e.world.home, ".claude.json"), join(d, ".claude.json"));
      if (existsSync(join(e.world.home, ".claude", "settings.json")))
        copyFileSync(join(e.world.home, ".claude", "settings.json"), join(d, "settings.json"));
      accounts[name] = { config_dir: d };
    }
    const file = join(e.world.root, "accounts.json");
    writeFileSync(file, JSON.stringify({ accounts }), { mode: 0o600 });
    // A plan login: the CLI reads the unified headers only then (docs/limits.md); no API key.
    m = await e.connect({
      CLAUDE_SESSIONS_ACCOUNTS: file,
      CLAUDE_CODE_OAUTH_TOKEN: `sk-ant-oat01-e2e-${"o".repeat(40)}`,
      ANTHROPIC_API_KEY: "",
    });
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  for (const [backend, account, five, seven] of [
    ["tmux", "T", 42, 17],
    ["headless", "H", 63, 8],
  ] as const) {
    it(`${backend}: the account's windows after one answer, in its file and health_check; the session's row names its account`, async () => {
      const s = await m.callOk("start_session", { cwd: e.dir(backend), backend, permission_mode: "default", account });
      const r = await m.callOk("send_message", {
        session_id: s.session_id,
        message: `windows MOCK_USAGE:${five / 100}:${seven / 100}`,
        timeout_ms: 60_000,
      });
      expect(r).toMatchObject({ completed: true });
      if (backend === "headless" && !headlessReports) {
        // This CLI's headless mode reports nothing for an allowed request: the account has no figures, and says so.
        await new Promise((res) => setTimeout(res, 3000)); // time for a late event (there is none to wait on)
        expect(readWindows(e.world.stateDir, account)).toBeUndefined();
        const row = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id);
        expect(row?.account).toBe(account);
        await m.callOk("kill_session", { session_id: s.session_id });
        return;
      }
      await until(() => readWindows(e.world.stateDir, account)?.seven_day !== undefined, 30_000, 250);
      const w = readWindows(e.world.stateDir, account)!;
      expect(w.five_hour?.used_percent).toBe(five);
      expect(w.seven_day?.used_percent).toBe(seven);
      // The mock's resets: an hour and three days after its answer.
      expect(Math.abs(Date.parse(w.five_hour!.resets_at) - Date.now() - 3600_000)).toBeLessThan(120_000);
      const h = await m.callOk("health_check", {});
      const detail = h.checks.find((c) => c.name === "accounts")?.detail ?? "";
      expect(detail).toContain(`${account}: 1 session(s), room, 5h ${five}% used`);
      expect(detail).toContain(`7d ${seven}% used`);
      const row = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id);
      expect(row?.account).toBe(account);
      await m.callOk("kill_session", { session_id: s.session_id });
    }, 180_000);
  }
});

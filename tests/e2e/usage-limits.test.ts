/**
 * Issue 33 with the real CLI against the mock API, on tmux and headless: the mock answers a prompt with
 * MOCK_LIMIT:rate:<secs> with a 429 and Anthropic's rate-limit headers until <secs> after its first request (an
 * API key's limit: the CLI gives no reset time, so the server waits CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS). The turn
 * ends limited (LIMITED, within that one turn), the session is parked (no process), woken after the wait, and the
 * prompt is answered exactly once: the mock's request log shows one 429 and one answer for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processesIn, until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

type Row = { session_id: string; status: string; limit?: { limit_kind: string; resets_at: string; wake_at?: string } };

describe.runIf(run)("real claude: a usage limit parks the session and it is answered once after the reset", () => {
  let e: E2e;
  beforeAll(async () => {
    e = await e2eWorld({
      dirs: ["tmux", "headless"],
      serverEnv: {
        CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "5000",
        CLAUDE_SESSIONS_LIMIT_JITTER_MS: "500",
        CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "60",
      },
    });
  });
  afterAll(async () => {
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  async function rowOf(m: Mcp, id: string): Promise<Row | undefined> {
    return (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === id) as Row | undefined;
  }

  for (const backend of ["tmux", "headless"] as const) {
    it(`${backend}: limited within one turn, parked, woken after the reset, answered exactly once`, async () => {
      const m = await e.connect();
      try {
        const cwd = e.dir(backend);
        const s = await m.callOk("start_session", { cwd, backend, permission_mode: "default" });
        const prompt = `${backend} job MOCK_LIMIT:rate:3`;
        const t0 = Date.now();
        const r = await m.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 30_000 });
        const detectedMs = Date.now() - t0;
        expect(r.error?.code, r.text).toBe("LIMITED");
        expect(r.error?.details).toMatchObject({ limit_kind: "rate", message_sent: true });
        console.log(`[e2e usage-limits] ${backend}: 429 → LIMITED in ${detectedMs} ms`);
        await until(async () => (await rowOf(m, s.session_id))?.limit?.wake_at !== undefined, 15_000);
        expect(await rowOf(m, s.session_id)).toMatchObject({ status: "limited", limit: { limit_kind: "rate" } });
        await until(() => processesIn(cwd).length === 0, 15_000);
        // Woken after the wait; the mock's limit lifted meanwhile: one answer.
        await until(() => e.requestsWith(prompt).some((q) => q.reply?.status === 200), 60_000, 250);
        await until(async () => (await rowOf(m, s.session_id))?.status === "idle", 30_000);
        await new Promise((res) => setTimeout(res, 2000));
        const statuses = e.requestsWith(prompt).map((q) => q.reply?.status);
        expect(statuses).toEqual([429, 200]);
        // The same conversation: the answered request carries the limited turn's prompt once, as the last user text.
        const w = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
        expect(w).toMatchObject({ completed: true });
        await m.callOk("kill_session", { session_id: s.session_id });
      } finally {
        await m.close();
      }
    }, 180_000);
  }
});

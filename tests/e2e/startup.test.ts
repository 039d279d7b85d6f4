/**
 * The real Claude Code CLI (offline, against tests/fixtures/mock-anthropic.ts): first-run screens. A folder
 * without trust and an API key never approved block the start with the way out; trust_workspace accepts
 * the trust screen. See tests/helpers/real-claude.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, OTHER_KEY, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: first-run screens", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["key"], untrusted: ["untrusted", "trust-me"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("g. a folder without trust, and a key never approved: STARTUP_BLOCKED with the way out", async () => {
    const [trust, key] = await Promise.all([
      m.call("start_session", { cwd: e.dir("untrusted"), permission_mode: "default" }),
      m.call("start_session", { cwd: e.dir("key"), permission_mode: "default", env: { ANTHROPIC_API_KEY: OTHER_KEY } }),
    ]);
    expect(trust.error?.code, trust.text).toBe("STARTUP_BLOCKED");
    expect(trust.error?.message).toMatch(/trust screen/);
    expect(trust.error?.suggestion).toContain("trust_workspace: true");
    expect(key.error?.code, key.text).toBe("STARTUP_BLOCKED");
    expect(key.error?.message).toMatch(/api key screen/);
    expect(key.error?.message).toContain("Do you want to use this API key?");
    expect(key.error?.suggestion).toContain("API key");
    // Nothing is left running; the records say why.
    const l = await m.call("list_sessions", {});
    expect(l.data.sessions.map((x) => x.status)).toEqual(["error", "error"]);
    expect(e.mock.mainRequests()).toHaveLength(0);
  });

  it("g. trust_workspace: true accepts the trust screen and the session works", async () => {
    const s = await m.call("start_session", { cwd: e.dir("trust-me"), permission_mode: "default", trust_workspace: true });
    expect(s.ok, s.text).toBe(true);
    expect(s.data.status).toBe("ready");
    const id = s.data.session_id as string;
    const r = await m.call("send_message", { session_id: id, message: "trusted now" });
    expect(r.data).toMatchObject({ final_state: "idle", response: "MOCK REPLY: trusted now" });
    await m.call("kill_session", { session_id: id });
  });
});

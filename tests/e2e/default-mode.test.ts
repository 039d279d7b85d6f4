/**
 * The real CLI, started WITHOUT permission_mode (issue #20): the server passes its own default ("default")
 * explicitly, so a Bash command outside the cwd asks for permission on every backend — whatever the CLI's own
 * default is (2.1.331's is auto mode, which stalls behind a "can't check" screen against the mock). Run it on
 * 2.1.331 with CLAUDE_PATH=/root/.cache/claude-sessions/cli/2.1.331/node_modules/.bin/claude.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractBackends, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, realClaudeVersion, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();
const BACKENDS = run ? [...(await contractBackends()), "headless" as const] : [];

describe.runIf(run)("real claude without permission_mode: the server's default, explicitly", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({ dirs: BACKENDS.map((b) => `dflt-${b}`) });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it.each(BACKENDS)(
    "%s: a Bash command outside the cwd surfaces pending_permission; the session says its mode and CLI version",
    async (backend) => {
      const outside = join(e.world.root, `outside-${backend}`);
      mkdirSync(outside, { recursive: true });
      const target = join(outside, "made.txt");
      const s = await m.call("start_session", { cwd: e.dir(`dflt-${backend}`), backend });
      expect(s.ok, s.text).toBe(true);
      expect(s.data).toMatchObject({ permission_mode: "default", claude_version: realClaudeVersion() });
      const id = s.data.session_id as string;
      const listed = await m.call("list_sessions", {});
      expect(listed.data.sessions.find((x) => x.session_id === id)).toMatchObject({
        permission_mode: "default",
        claude_version: realClaudeVersion(),
      });

      const r = await m.call("send_message", { session_id: id, message: `MOCK_BASH:touch ${target}`, timeout_ms: 30_000 });
      expect(r.data, r.text).toMatchObject({
        completed: false,
        final_state: "waiting_for_permission",
        pending_permission: { tool_name: "Bash", tool_input: { command: `touch ${target}` } },
      });
      const d = await m.call("respond_permission", { session_id: id, decision: "deny" });
      expect(d.data, d.text).toMatchObject({ answered: true, decision: "deny" });
      const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 30_000 });
      expect(done.data, done.text).toMatchObject({ completed: true });
      expect(existsSync(target)).toBe(false);
      await m.call("kill_session", { session_id: id });
    },
  );
});

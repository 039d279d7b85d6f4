/**
 * health_check with real parts (it runs the fake claude's `--version`, loads the Agent SDK and node-pty): the
 * member_socket (issue 25 follow-up): a real Unix socket listening with mode 0600 is ok, with a wider mode degraded; a
 * path nobody listens on is reported as not listening (a warning with no team session to need it); doctor, which has
 * no socket of its own, reports none. The backends (issue #24): no tmux and no node-pty is not down while headless
 * can start, the Agent SDK is checked.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { makeRunners } from "../../src/runners/registry.js";
import type { Runner } from "../../src/runners/runner.js";
import { healthChecks } from "../../src/server/health.js";
import { createLogger } from "../../src/util/log.js";
import { FAKE_CLAUDE } from "../helpers/paths.js";

const dir = mkdtempSync(join(tmpdir(), "cs-health-"));
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  rmSync(dir, { recursive: true, force: true });
});
const cfg = loadConfig({ CLAUDE_SESSIONS_DIR: join(dir, "state"), CLAUDE_PATH: FAKE_CLAUDE, HOME: dir });

async function listen(path: string, mode: number): Promise<void> {
  const s = createServer((sock) => sock.end());
  servers.push(s);
  await new Promise<void>((r) => s.listen(path, r));
  chmodSync(path, mode);
}

describe("health_check's member socket", () => {
  it("listening with 0600 is ok; with a wider mode, degraded", async () => {
    const ok = join(dir, "ok.sock");
    await listen(ok, 0o600);
    const h = await healthChecks({ cfg, version: "test", memberSocket: ok });
    expect(h.member_socket).toEqual({ path: ok, listening: true });
    expect(h.checks.find((c) => c.name === "member_socket")).toMatchObject({ status: "ok" });
    const wide = join(dir, "wide.sock");
    await listen(wide, 0o666);
    const w = await healthChecks({ cfg, version: "test", memberSocket: wide });
    expect(w.member_socket).toEqual({ path: wide, listening: true });
    expect(w.checks.find((c) => c.name === "member_socket")).toMatchObject({
      status: "degraded",
      detail: expect.stringContaining("0666, not 0600"),
    });
    expect(w.status).toBe("degraded");
  });

  it("a path nobody listens on is not listening: a warning when no team session needs it", async () => {
    const none = join(dir, "none.sock");
    const h = await healthChecks({ cfg, version: "test", memberSocket: none });
    expect(h.member_socket).toEqual({ path: none, listening: false });
    expect(h.checks.find((c) => c.name === "member_socket")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(`${none} is not listening`),
    });
  });

  it("without a socket of its own (doctor) there is no member_socket", async () => {
    const h = await healthChecks({ cfg, version: "test" });
    expect(h.member_socket).toBeUndefined();
    expect(h.checks.map((c) => c.name)).not.toContain("member_socket");
  });
});

describe("health_check and the backends", () => {
  it("no tmux and no node-pty is not down when headless can start; the Agent SDK is checked", async () => {
    const cfg = loadConfig({
      CLAUDE_SESSIONS_DIR: join(dir, "state"),
      CLAUDE_SESSIONS_TMUX: join(dir, "no-tmux"),
      CLAUDE_PATH: FAKE_CLAUDE,
      HOME: dir,
    });
    // This machine's node-pty (and, below, the Agent SDK) as missing: the runner answers health as it would then.
    const runners = makeRunners({
      cfg,
      log: createLogger({ level: "error" }),
      scripts: { hook: "", launch: "", capture: "", permission: "" },
    });
    const missing = (kind: string): Runner[] =>
      runners.map((r) =>
        r.kind === kind || (kind === "all" && r.kind !== "tmux")
          ? { ...r, health: async () => ({ ...(await r.health()), ok: false, detail: `${r.kind} is missing here` }) }
          : r,
      );
    const h = await healthChecks({ cfg, version: "test", runners: missing("pty") });
    expect(h.checks.find((c) => c.name === "agent_sdk")).toMatchObject({ status: "ok" });
    expect(h.checks.find((c) => c.name === "tmux")).toMatchObject({
      status: "degraded",
      detail: expect.stringContaining("headless sessions still work"),
    });
    expect(h.checks.find((c) => c.name === "pty")?.status).toBe("degraded");
    expect(h.status).not.toBe("down");
    const none = await healthChecks({ cfg, version: "test", runners: missing("all") });
    expect(none.status).toBe("down");
  });
});

/**
 * Resume and fork of headless sessions on the real CLI, the record's events log across processes, and
 * secrets: a session's env and its MCP servers' env reach the child, never its argv.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transcriptPath } from "../../src/claude/transcript.js";
import { headlessCliOrSkip, headlessWorld, hookNames, type HeadlessWorld } from "../helpers/headless.js";

const run = headlessCliOrSkip();

describe.runIf(run)("headless engine: resume, fork, secrets", () => {
  let w: HeadlessWorld;
  beforeAll(async () => {
    w = await headlessWorld({ dirs: ["conv", "secret"] });
  });
  afterAll(async () => {
    await w?.cleanup();
  });

  it("resume keeps the Claude session id and the conversation; fork gives a new id with the same history", async () => {
    const a = await w.start("conv", "conv");
    const id = a.claudeSessionId;
    const first = await a.send("first turn");
    expect(first.claude_session_id).toBe(id);
    await a.close();
    expect(a.fold.status).toBe("dead");

    // Same record (same events log): cs:spawn starts a new fold for the new process.
    const b = await w.start("conv", "conv", { resume: id });
    expect(b.claudeSessionId).toBe(id);
    expect(b.fold).toMatchObject({ status: "ready", claude_session_id: id });
    const from = w.mock.requests.length;
    const second = await b.send("second turn");
    expect(second).toMatchObject({ claude_session_id: id, result: "MOCK REPLY: second turn" });
    const history = JSON.stringify(w.mainSince(from)[0]?.body?.messages);
    expect(history).toContain("first turn");
    expect(history).toContain("MOCK REPLY: first turn");
    // The CLI's running cost starts from the transcript's total; the engine reports this turn's share.
    expect(second.total_cost_usd).toBeCloseTo(first.total_cost_usd + second.cost_usd, 6);
    expect(second.cost_usd).toBeLessThan(second.total_cost_usd);
    await b.close();

    const c = await w.start("conv", "conv", { resume: id, fork_session: true });
    expect(c.claudeSessionId).not.toBe(id);
    const from2 = w.mock.requests.length;
    const third = await c.send("third turn");
    expect(third.claude_session_id).toBe(c.claudeSessionId);
    const history2 = JSON.stringify(w.mainSince(from2)[0]?.body?.messages);
    expect(history2).toContain("first turn");
    expect(history2).toContain("second turn");
    expect(c.fold.claude_session_id).toBe(c.claudeSessionId);
    expect(existsSync(transcriptPath(join(w.home, ".claude"), w.dir("conv"), c.claudeSessionId))).toBe(true);
    await c.close();

    const evs = w.events("conv");
    expect(evs.filter((e) => e.hook_event_name === "SessionStart").map((e) => [e.source, e.session_id])).toEqual([
      ["startup", id],
      ["resume", id],
      // Unlike the interactive CLI, SessionStart of a fork under the SDK already reports the new id.
      ["fork", c.claudeSessionId],
    ]);
    expect(hookNames(evs).filter((n) => n === "cs:spawn" || n === "SessionEnd" || n === "cs:exit")).toEqual([
      "cs:spawn",
      "SessionEnd",
      "cs:exit",
      "cs:spawn",
      "SessionEnd",
      "cs:exit",
      "cs:spawn",
      "SessionEnd",
      "cs:exit",
    ]);
  });

  it("env and MCP server env reach the child's environment only, never its argv", async () => {
    const secret = `sekrit-${Math.random().toString(36).slice(2)}`;
    const mcpSecret = `mcp-sekrit-${Math.random().toString(36).slice(2)}`;
    const s = await w.start("secret", "secret", {
      env: { ...w.env, MY_TOKEN: secret },
      mcp_servers: { probe: { type: "stdio", command: "/bin/true", env: { PROBE_TOKEN: mcpSecret } } },
      strict_mcp_config: true,
    });
    const argv = readFileSync(`/proc/${s.pid}/cmdline`, "utf8");
    const environ = readFileSync(`/proc/${s.pid}/environ`, "utf8").split("\0");
    expect(argv).not.toContain(secret);
    expect(argv).not.toContain(mcpSecret);
    expect(argv).not.toContain("--mcp-config");
    expect(argv).not.toContain(w.env.ANTHROPIC_API_KEY!);
    expect(environ).toContain(`MY_TOKEN=${secret}`);
    expect(environ.some((e) => e.startsWith("CLAUDECODE="))).toBe(false);
    const r = await s.send("with secrets around");
    expect(r.result).toBe("MOCK REPLY: with secrets around");
    const logs = readFileSync(w.eventsPath("secret"), "utf8") + readFileSync(join(w.stateDir, "secret", "settings.json"), "utf8");
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(mcpSecret);
  });
});

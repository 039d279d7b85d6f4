/**
 * Parallel attempts (issue 34) with the real Claude Code CLI (headless) against the mock API, real git: a fan-out of
 * three whose first request to the mock is answered with a Write the operator's check refuses → ranked
 * last; the winner merged, the loser's merge a conflict that changes nothing; the conflict radar fires for two
 * sessions whose Write (MOCK_WRITE) hits the same file, and not for a different file.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";
import { until } from "../helpers/wait.js";

const run = realClaudeOrSkip();

describe.runIf(run)("real claude: fan_out, merge_worktree, the conflict radar", () => {
  let e: E2e;
  let m: Mcp;
  let repo: string;
  const notes: Array<Record<string, unknown>> = [];
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: e.world.home },
    });

  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["repo"] });
    const checks = join(e.world.root, "checks.json");
    writeFileSync(
      checks,
      JSON.stringify({ checks: [{ name: "answer", argv: ["grep", "-qx", "good", "app.txt"], timeout_ms: 10_000 }] }),
    );
    m = await e.connect({ CLAUDE_SESSIONS_CHECKS: checks });
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notes.push(n.params.data as Record<string, unknown>),
    );
    repo = e.dir("repo");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
  }, 60_000);
  afterAll(async () => {
    await m?.close();
    await e?.cleanup();
  });

  it("a fan-out of three: the attempt that breaks the check is ranked last; the winner merges, the loser conflicts", async () => {
    // The mock answers the prompt with a Write of app.txt in the session's own worktree (its path is in the request):
    // "bad" for the first request that arrives, "good" for the others.
    const wtRe = new RegExp(`${e.world.stateDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/worktrees/([a-z0-9]+)`);
    let first = true;
    e.mock.setHandler((req) => {
      if (req.lastUserText !== "ATTEMPT: fix app.txt") return undefined;
      const id = wtRe.exec(JSON.stringify(req.body))?.[1];
      if (!id) return { text: "MOCK: no worktree in the request" };
      const content = first ? "bad\n" : "good\n";
      first = false;
      return {
        blocks: [
          { type: "tool_use", name: "Write", input: { file_path: join(e.world.stateDir, "worktrees", id, "app.txt"), content } },
        ],
      };
    });
    const r = await m.callOk(
      "fan_out",
      { cwd: repo, prompt: "ATTEMPT: fix app.txt", n: 3, permission_mode: "acceptEdits", timeout_ms: 120_000 },
      { timeout: 240_000 },
    );
    e.mock.setHandler(undefined);
    expect(r.attempts.map((a) => a.outcome)).toEqual(["completed", "completed", "completed"]);
    expect(r.attempts.map((a) => a.checks_passed)).toEqual([1, 1, 0]);
    for (const a of r.attempts) expect(a.diff).toEqual({ files: 1, added: 1, removed: 1 });
    expect(r.attempts[0]!.summary).toContain("MOCK: tool done");

    const won = await m.callOk("merge_worktree", { session_id: r.attempts[0]!.session_id });
    expect(won.merged).toBe(true);
    expect(readFileSync(join(repo, "app.txt"), "utf8")).toBe("good\n");
    const before = git(repo, "rev-parse", "main").trim();
    const lost = await m.callOk("merge_worktree", { session_id: r.attempts[2]!.session_id });
    expect(lost).toMatchObject({ merged: false, conflicts: ["app.txt"] });
    expect(git(repo, "rev-parse", "main").trim()).toBe(before);
    for (const a of r.attempts) await m.callOk("kill_session", { session_id: a.session_id, remove_worktree: true, force: true });
  }, 300_000);

  it("the radar fires when two sessions Write the same file, not for a different file", async () => {
    const start = async () =>
      m.callOk("start_session", { cwd: repo, worktree: true, backend: "headless", permission_mode: "acceptEdits" });
    const [a, b, c] = await Promise.all([start(), start(), start()]);
    const write = async (s: { session_id: string; cwd?: string | undefined }, file: string) => {
      const r = await m.callOk("send_message", {
        session_id: s.session_id,
        message: `MOCK_WRITE:${join(s.cwd!, file)}:from ${s.session_id}`,
        timeout_ms: 60_000,
      });
      expect(r.completed).toBe(true);
    };
    await write(a, "shared.txt");
    await write(c, "other.txt");
    await write(b, "shared.txt");
    const overlap = (id: string) => notes.find((n) => n.event === "overlap" && n.session_id === id);
    await until(() => overlap(a.session_id) && overlap(b.session_id), 10_000);
    expect(overlap(a.session_id)).toMatchObject({ other_session_id: b.session_id, file: "shared.txt" });
    const listed = (await m.callOk("list_sessions", {})).sessions;
    expect(listed.find((s) => s.session_id === b.session_id)?.overlaps).toEqual([
      { session_id: a.session_id, file: "shared.txt" },
    ]);
    expect(listed.find((s) => s.session_id === c.session_id)?.overlaps).toBeUndefined();
    expect(notes.filter((n) => n.event === "overlap" && n.session_id === c.session_id)).toEqual([]);
  }, 300_000);
});

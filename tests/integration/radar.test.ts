/**
 * The conflict radar (issue 34) with real git and the fake claude (headless, FAKE_WRITE: the Write tool's hooks):
 * two live sessions of one repository that write the same file are told (a notification each, `overlaps` on
 * list_sessions); a third that writes another file is not; a session that ended overlaps with nobody.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, type Mcp, type World } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";

describe("conflict radar (headless, fake claude, real git)", () => {
  let w: World;
  let m: Mcp;
  let repo: string;
  const notes: Array<{ data: Record<string, unknown>; at: number }> = [];
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const start = async () =>
    (await m.callOk("start_session", { cwd: repo, worktree: true, trust_workspace: true, backend: "headless" })).session_id;
  const overlapsOf = async (id: string) =>
    (await m.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.overlaps;

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    m = await connect(w);
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notes.push({ data: n.params.data as Record<string, unknown>, at: Date.now() }),
    );
    repo = w.dir("repo");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "shared.txt"), "base\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("fires when two live sessions write the same file, not for a different file, and stops when one ends", async () => {
    const [a, b, c] = await Promise.all([start(), start(), start()]);
    await m.callOk("send_message", { session_id: a, message: "FAKE_WRITE:shared.txt:from a" });
    await m.callOk("send_message", { session_id: c, message: "FAKE_WRITE:other.txt:from c" });
    expect(await overlapsOf(a)).toBeUndefined();

    const sent = Date.now();
    await m.callOk("send_message", { session_id: b, message: "FAKE_WRITE:shared.txt:from b", wait_for_response: false });
    const overlap = (id: string) => notes.find((n) => n.data.event === "overlap" && n.data.session_id === id);
    const [na, nb] = await until(() => overlap(a) && overlap(b) && [overlap(a)!, overlap(b)!], 10_000, 10);
    expect(na.data).toMatchObject({ event: "overlap", session_id: a, other_session_id: b, file: "shared.txt" });
    expect(nb.data).toMatchObject({ event: "overlap", session_id: b, other_session_id: a, file: "shared.txt" });
    // Seen as the edit's hook line is folded (the bound is 1 s; generous here, the bench measures it).
    expect(Math.max(na.at, nb.at) - sent).toBeLessThan(5_000);

    expect(await overlapsOf(a)).toEqual([{ session_id: b, file: "shared.txt" }]);
    expect(await overlapsOf(b)).toEqual([{ session_id: a, file: "shared.txt" }]);
    expect(await overlapsOf(c)).toBeUndefined();
    expect(notes.filter((n) => n.data.event === "overlap" && (n.data.session_id === c || n.data.other_session_id === c))).toEqual(
      [],
    );

    await m.callOk("kill_session", { session_id: b });
    await until(async () => (await overlapsOf(a)) === undefined, 10_000);
  });
});

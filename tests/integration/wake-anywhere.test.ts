/**
 * wake_anywhere and move_session {node: "auto"} (issue 36 item 3), with real parts: coordinators (the built server, a
 * real MCP client's view) over two nodes — the built server with worlds of their own (HOME, state directory, tmux
 * server), reached through the loopback exec command — running the fake claude in tmux, CLAUDE_SESSIONS_MAX_LIVE set
 * on every machine (this one 1, node a 1, node b 2 with MAX_CONCURRENT_SESSIONS 3). With CLAUDE_SESSIONS_WAKE_ANYWHERE
 * on, a prompt to a hibernated session whose node is full wakes it on the machine with room: the same id, the
 * conversation continued there (the fake refuses to resume an id it has no transcript of), gone from the old node,
 * whose live session was left alone. `auto` moves to the machine with room under MAX_LIVE (not the one with the most
 * free slots), and with no room anywhere is LIMIT_REACHED, nothing moved. With the setting off (a second coordinator
 * on the same machines), and for a session in a worktree, the session wakes where it is and its node hibernates its
 * least recently used idle session, as before.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";
import { loopbackExec, writeNodesFile } from "../helpers/test-hosts.mjs";

const enabled = tmuxOrSkip();

/** The transcripts (.jsonl) under a world's Claude directory that mention `word`. */
function mentioning(w: World, word: string): string[] {
  const root = join(w.home, ".claude", "projects");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .flatMap((d) => readdirSync(join(root, d)).map((f) => join(root, d, f)))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => readFileSync(f, "utf8"))
    .filter((t) => t.includes(word));
}

describe.skipIf(!enabled)("wake_anywhere and move_session auto (loopback nodes with MAX_LIVE, tmux, fake claude)", () => {
  let here: World;
  let a: World;
  let b: World;
  /** The coordinator with CLAUDE_SESSIONS_WAKE_ANYWHERE=1. */
  let m: Mcp;
  /** One without it, on the same machines. */
  let plain: Mcp;
  let proj: string;
  let local: string;
  let s1: string;
  let s2: string;

  beforeAll(async () => {
    here = makeWorld({ CLAUDE_SESSIONS_MAX_LIVE: "1" });
    a = makeWorld({ CLAUDE_SESSIONS_MAX_LIVE: "1" });
    b = makeWorld({ CLAUDE_SESSIONS_MAX_LIVE: "2", MAX_CONCURRENT_SESSIONS: "3" });
    proj = here.dir("proj");
    here.env.CLAUDE_SESSIONS_NODES = writeNodesFile(here.root, {
      a: { exec: loopbackExec(a.env) },
      b: { exec: loopbackExec(b.env) },
    });
    m = await connect(here, { CLAUDE_SESSIONS_WAKE_ANYWHERE: "1" });
    plain = await connect(here);
  });

  afterAll(async () => {
    for (const c of [m, plain]) await c?.close().catch(() => {});
    for (const w of [here, a, b]) w?.cleanup();
  });

  const where = async (id: string) =>
    (await m.callOk("list_sessions", { status_filter: "all" })).sessions
      .filter((s) => s.session_id === id)
      .map((s) => `${s.node ?? "local"}:${s.status}`);
  /**
   * Waits until `m` lists the session so: after a call through the other coordinator (another node server on the same
   * state directory), a record's status reaches state.json on its next batched write.
   */
  const settles = async (id: string, want: string) => {
    await until(async () => (await where(id)).join() === want, 30_000, 100).catch(() => {});
    expect(await where(id)).toEqual([want]);
  };
  const idsOn = async (node: string) =>
    (await m.callOk("list_sessions", { status_filter: "all", node_filter: node })).sessions.map((s) => s.session_id);
  /** A session on `node` that took one turn mentioning `word`. */
  const talked = async (c: Mcp, node: string, word: string, cwd = proj) => {
    const s = await c.callOk("start_session", { cwd, node });
    expect((await c.callOk("send_message", { session_id: s.session_id, message: `remember ${word}` })).response).toBe(
      `FAKE REPLY: remember ${word}`,
    );
    return s.session_id as string;
  };

  it("a prompt to a hibernated session on a full node wakes it on the node with room: same id, same conversation, gone from the old node", async () => {
    // This machine full (1 of MAX_LIVE 1), a full (s2), s1 hibernated on a; b has room (0 of 2).
    local = (await m.callOk("start_session", { cwd: proj })).session_id as string;
    s1 = await talked(m, "a", "PELICAN");
    expect((await m.callOk("kill_session", { session_id: s1, hibernate: true })).status).toBe("hibernated");
    s2 = (await m.callOk("start_session", { cwd: proj, node: "a" })).session_id as string;
    expect(await where(s1)).toEqual(["a:hibernated"]);
    expect((await where(s2))[0]).toMatch(/^a:(ready|idle)$/);

    const sent = await m.callOk("send_message", { session_id: s1, message: "what was the word?" }, { timeout: 120_000 });
    expect(sent).toMatchObject({ response: "FAKE REPLY: what was the word?", node: "b", woke: true, completed: true });
    expect(await where(s1)).toEqual(["b:idle"]);
    expect(await idsOn("a")).not.toContain(s1);
    // The conversation went with it and continued on b; a has none of it.
    const [text, ...more] = mentioning(b, "PELICAN");
    expect(more).toEqual([]);
    expect(text).toContain("what was the word?");
    expect(mentioning(a, "PELICAN")).toEqual([]);
    // a made no room: its live session was not hibernated.
    expect((await where(s2))[0]).toMatch(/^a:(ready|idle)$/);
    expect(existsSync(join(here.stateDir, "moves")) ? readdirSync(join(here.stateDir, "moves")) : []).toEqual([]);
  }, 240_000);

  it('move_session {node: "auto"} goes to the machine with room under MAX_LIVE; none: LIMIT_REACHED, nothing moved', async () => {
    // local 1 of 1, a 1 of 1, b 1 of 2 (3 slots): from b, no other machine has room.
    const r = await m.call("move_session", { session_id: s1, node: "auto" });
    expect(r.error?.code, r.text).toBe("LIMIT_REACHED");
    expect(`${r.error?.message} ${r.error?.suggestion}`).toContain("CLAUDE_SESSIONS_MAX_LIVE");
    expect(await where(s1)).toEqual(["b:idle"]);
    // From a: b has room (1 of 2), though this machine has the most free slots (9 of 10 against b's 2 of 3).
    const moved = await m.callOk("move_session", { session_id: s2, node: "auto" });
    expect(moved).toMatchObject({ session_id: s2, from: "a", node: "b", status: "hibernated" });
    expect(await where(s2)).toEqual(["b:hibernated"]);
    expect(await idsOn("a")).not.toContain(s2);
  }, 120_000);

  it("with the setting off, and for a session in a worktree, it wakes where it is and its node makes room", async () => {
    // Without wake_anywhere: s3 hibernated on a, s4 live there (a full); b has room. The prompt wakes s3 on a.
    const s3 = await talked(plain, "a", "HERON");
    await plain.callOk("kill_session", { session_id: s3, hibernate: true });
    const s4 = (await plain.callOk("start_session", { cwd: proj, node: "a" })).session_id as string;
    const sent = await plain.callOk("send_message", { session_id: s3, message: "and now?" }, { timeout: 120_000 });
    expect(sent).toMatchObject({ response: "FAKE REPLY: and now?", node: "a", woke: true });
    await settles(s3, "a:idle");
    await settles(s4, "a:hibernated");
    expect(mentioning(b, "HERON")).toEqual([]);

    // With it, a session in a worktree is not moved: it wakes on a (full again), which hibernates s3.
    const repo = join(proj, "repo");
    mkdirSync(repo);
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
    git("init", "-q");
    writeFileSync(join(repo, "f"), "x");
    git("add", "f");
    git("commit", "-qm", "one");
    const wt = (await m.callOk("start_session", { cwd: repo, node: "a", worktree: true })).session_id as string;
    await settles(s3, "a:hibernated");
    await m.callOk("kill_session", { session_id: wt, hibernate: true });
    await plain.callOk("send_message", { session_id: s3, message: "back" }, { timeout: 120_000 });
    await settles(s3, "a:idle");
    const woke = await m.callOk("send_message", { session_id: wt, message: "in the tree" }, { timeout: 120_000 });
    expect(woke).toMatchObject({ response: "FAKE REPLY: in the tree", node: "a", woke: true });
    await settles(wt, "a:idle");
    await settles(s3, "a:hibernated");
    for (const id of [local, s1, s2, s3, s4, wt]) await m.callOk("kill_session", { session_id: id });
  }, 300_000);
});

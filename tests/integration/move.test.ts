/**
 * move_session (issue 36 item 3), with real parts: a coordinator (the built server, a real MCP client's view) and two
 * nodes — the built server with worlds of their own (HOME, state directory, tmux server), reached through the
 * loopback exec command — running the fake claude in tmux. A session's conversation goes from node a to node b: the
 * transcript arrives in b's Claude directory and leaves a's, a no longer lists the id, b does (hibernated), and a
 * send there continues the same conversation. Bad input (unknown node, same node, unknown session, a busy session, a
 * session in a worktree) is typed and changes nothing. A coordinator killed with -9 in the middle of a move, and the
 * states a kill leaves after each later step, end with the session on exactly one node once it restarts.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";
import { loopbackExec, writeNodesFile } from "../helpers/test-hosts.mjs";

const enabled = tmuxOrSkip();

/** Every transcript (.jsonl) under a world's Claude directory, with its text. */
function transcripts(w: World): Map<string, string> {
  const out = new Map<string, string>();
  const root = join(w.home, ".claude", "projects");
  if (!existsSync(root)) return out;
  for (const d of readdirSync(root))
    for (const f of readdirSync(join(root, d)))
      if (f.endsWith(".jsonl")) out.set(join(root, d, f), readFileSync(join(root, d, f), "utf8"));
  return out;
}
const mentions = (w: World, word: string) => [...transcripts(w).values()].filter((t) => t.includes(word)).length;

/** The pid of the node server the coordinator runs for world `w` (its child whose environment has w's state dir). */
function nodeServerOf(coordinator: number, w: World): number {
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      if (
        ppid === coordinator &&
        readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(`CLAUDE_SESSIONS_DIR=${w.stateDir}`)
      )
        return Number(p);
    } catch {
      /* gone */
    }
  }
  throw new Error(`no node server of ${w.stateDir} under ${coordinator}`);
}

describe.skipIf(!enabled)("move_session between two nodes (loopback nodes, tmux, fake claude)", () => {
  let here: World;
  let a: World;
  let b: World;
  let m: Mcp;
  let proj: string;

  beforeAll(async () => {
    here = makeWorld();
    a = makeWorld();
    b = makeWorld();
    // One directory every machine has (the session's cwd is the same path on the node it moves to).
    proj = here.dir("proj");
    here.env.CLAUDE_SESSIONS_NODES = writeNodesFile(here.root, {
      a: { exec: loopbackExec(a.env) },
      b: { exec: loopbackExec(b.env) },
    });
    m = await connect(here);
  });

  afterAll(async () => {
    await m?.close().catch(() => {});
    for (const w of [here, a, b]) w?.cleanup();
  });

  const where = async (id: string) =>
    (await m.callOk("list_sessions", { status_filter: "all" })).sessions
      .filter((s) => s.session_id === id)
      .map((s) => `${s.node ?? "local"}:${s.status}`);
  const journals = () => (existsSync(join(here.stateDir, "moves")) ? readdirSync(join(here.stateDir, "moves")) : []);
  /** A session on node a that took one turn mentioning `word`. */
  const talked = async (word: string) => {
    const s = await m.callOk("start_session", { cwd: proj, node: "a" });
    expect((await m.callOk("send_message", { session_id: s.session_id, message: `remember ${word}` })).response).toBe(
      `FAKE REPLY: remember ${word}`,
    );
    return s.session_id;
  };

  it("carries the conversation to the other node: the transcript arrives, the old node no longer has it, a send there continues it", async () => {
    const id = await talked("PELICAN");
    expect(mentions(a, "PELICAN")).toBe(1);
    expect(mentions(b, "PELICAN")).toBe(0);
    const r = await m.callOk("move_session", { session_id: id, node: "b" });
    expect(r).toMatchObject({ session_id: id, from: "a", node: "b", status: "hibernated" });
    expect(r.transcript_bytes).toBeGreaterThan(0);
    expect(mentions(b, "PELICAN")).toBe(1);
    expect(mentions(a, "PELICAN")).toBe(0);
    expect(await where(id)).toEqual(["b:hibernated"]);
    expect(
      (await m.callOk("list_sessions", { status_filter: "all", node_filter: "a" })).sessions.map((s) => s.session_id),
    ).not.toContain(id);
    expect(journals()).toEqual([]);
    // The next prompt wakes it on b, resuming the same conversation (the fake refuses an id it has no transcript of).
    const sent = await m.callOk("send_message", { session_id: id, message: "what was the word?" }, { timeout: 90_000 });
    expect(sent.response).toBe("FAKE REPLY: what was the word?");
    expect(sent.node).toBe("b");
    const [text] = [...transcripts(b).values()].filter((t) => t.includes("PELICAN"));
    expect(text).toContain("what was the word?");
    expect(await where(id)).toEqual(["b:idle"]);
    // And back to the coordinator's own machine (with the CLI, beside the running server), then on to a again.
    const cli = JSON.parse(
      execFileSync(process.execPath, [CLI, "move", id, "local"], { env: here.env, encoding: "utf8", cwd: here.root }),
    ) as { from: string; node: string };
    expect(cli).toMatchObject({ from: "b", node: "local" });
    expect(await where(id)).toEqual(["local:hibernated"]);
    expect(mentions(here, "PELICAN")).toBe(1);
    expect(mentions(b, "PELICAN")).toBe(0);
    expect((await m.callOk("move_session", { session_id: id, node: "a" })).from).toBe("local");
    expect((await m.callOk("send_message", { session_id: id, message: "still there?" }, { timeout: 90_000 })).node).toBe("a");
    await m.callOk("kill_session", { session_id: id });
  });

  it("refuses an unknown node, the same node, an unknown session, a busy one and one in a worktree, changing nothing", async () => {
    const id = await talked("HERON");
    const before = await where(id);
    expect(before).toEqual(["a:idle"]);
    const refused = async (args: { session_id: string; node: string }, code: string, words: string) => {
      const r = await m.call("move_session", args);
      expect(r.error?.code, r.text).toBe(code);
      expect(`${r.error?.message} ${r.error?.suggestion}`).toContain(words);
    };
    await refused({ session_id: id, node: "nowhere" }, "INVALID_ARGUMENT", "a, b");
    await refused({ session_id: id, node: "a" }, "INVALID_ARGUMENT", "already on node a");
    await refused({ session_id: "no-such-session", node: "b" }, "SESSION_NOT_FOUND", "no-such-session");
    expect((await m.callRaw("move_session", { session_id: "../../etc", node: "b" })).ok).toBe(false);
    expect((await m.callRaw("move_session", { session_id: id, node: "b; touch /tmp/x" })).ok).toBe(false);
    expect(await where(id)).toEqual(before);
    // Busy: refused, still busy where it was.
    await m.callOk("send_message", { session_id: id, message: "FAKE_SLOW:60000 long", wait_for_response: false });
    await until(async () => (await where(id))[0] === "a:busy", 15_000, 100);
    await refused({ session_id: id, node: "b" }, "SESSION_BUSY", "busy");
    expect(await where(id)).toEqual(["a:busy"]);
    await m.callOk("interrupt_session", { session_id: id });
    // A worktree stays with its machine: refused, saying why.
    const repo = join(proj, "repo");
    mkdirSync(repo);
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
    git("init", "-q");
    writeFileSync(join(repo, "f"), "x");
    git("add", "f");
    git("commit", "-qm", "one");
    const wt = await m.callOk("start_session", { cwd: repo, node: "a", worktree: true });
    await refused({ session_id: wt.session_id, node: "b" }, "UNSUPPORTED_OPTION", "worktree");
    expect((await where(wt.session_id))[0]).toMatch(/^a:(ready|idle)$/);
    expect(mentions(b, "HERON")).toBe(0);
    expect(journals()).toEqual([]);
    for (const s of [id, wt.session_id]) await m.callOk("kill_session", { session_id: s });
    // A server without nodes has nowhere to move a session to.
    const alone = await connect(a);
    try {
      const r = await alone.call("move_session", { session_id: id, node: "b" });
      expect(r.error?.code, r.text).toBe("INVALID_ARGUMENT");
      expect(r.error?.suggestion, r.text).toContain("CLAUDE_SESSIONS_NODES");
    } finally {
      await alone.close();
    }
  });

  it("a coordinator killed with -9 in the middle of a move leaves the session on exactly one node after its restart", async () => {
    const id = await talked("OSPREY");
    await m.callOk("list_sessions", { node_filter: "b" });
    // b stops answering: the move hangs at its import, journaled; the coordinator is killed there.
    const bPid = nodeServerOf(m.pid!, b);
    process.kill(bPid, "SIGSTOP");
    const moving = m.call("move_session", { session_id: id, node: "b" }).catch(() => undefined);
    await until(() => journals().length === 1, 30_000, 20);
    process.kill(m.pid!, "SIGKILL");
    process.kill(bPid, "SIGCONT");
    await moving;
    await m.close().catch(() => {});
    m = await connect(here);
    await until(async () => journals().length === 0 && (await where(id)).length === 1, 30_000, 250);
    expect(await where(id)).toEqual(["a:hibernated"]);
    expect(mentions(a, "OSPREY")).toBe(1);
    // b's old server (the killed coordinator's child) may still be reading the import sent to it: refused once it
    // gets to it, its copy goes (whichever came first, no copy stays on b).
    await until(
      () => mentions(b, "OSPREY") === 0 && !readFileSync(join(b.stateDir, "state.json"), "utf8").includes(id),
      20_000,
      100,
    );
    expect((await m.callOk("send_message", { session_id: id, message: "after the restart" }, { timeout: 90_000 })).node).toBe(
      "a",
    );
    await m.callOk("kill_session", { session_id: id });
  });

  /**
   * The states a kill leaves after the later steps, made by the steps themselves (transfer_session on each node's
   * own server) and the coordinator's journal: imported but not released → the copy is removed; released but not
   * committed → the copy is committed.
   */
  it.each([
    ["imported, not released: the copy on b is removed", ["import"], "a:hibernated", "a"],
    ["released, not committed: the copy on b is committed", ["import", "release"], "b:hibernated", "b"],
  ] as const)("%s", async (_name, steps, expected, holder) => {
    const id = await talked(`KITE${steps.length}`);
    process.kill(m.pid!, "SIGKILL");
    await m.close().catch(() => {});
    const [na, nb] = await Promise.all([connect(a), connect(b)]);
    try {
      const move_id = `mv-test${steps.length}kill`;
      const ex = await na.callOk("transfer_session", { op: "export", session_id: id, move_id });
      mkdirSync(join(here.stateDir, "moves"), { recursive: true, mode: 0o700 });
      writeFileSync(
        join(here.stateDir, "moves", `${move_id}.json`),
        JSON.stringify({ move_id, session_id: id, from: "a", to: "b", started_at: new Date().toISOString() }),
        { mode: 0o600 },
      );
      await nb.callOk("transfer_session", { op: "import", session_id: id, move_id, bundle: ex.bundle! });
      if ((steps as readonly string[]).includes("release"))
        await na.callOk("transfer_session", { op: "release", session_id: id, move_id, seq: ex.bundle!.seq });
      // The incoming copy is not listed by its node.
      expect((await nb.callOk("list_sessions", { status_filter: "all" })).sessions.map((s) => s.session_id)).not.toContain(id);
    } finally {
      await Promise.all([na.close(), nb.close()]);
    }
    m = await connect(here);
    await until(async () => journals().length === 0 && (await where(id)).length === 1, 30_000, 250);
    expect(await where(id)).toEqual([expected]);
    const word = `KITE${steps.length}`;
    expect(mentions(holder === "a" ? a : b, word)).toBe(1);
    expect(mentions(holder === "a" ? b : a, word)).toBe(0);
    expect((await m.callOk("send_message", { session_id: id, message: "after the restart" }, { timeout: 90_000 })).node).toBe(
      holder,
    );
    await m.callOk("kill_session", { session_id: id });
  });
});

/**
 * Issue #23 (speed): the warm pool (CLAUDE_SESSIONS_WARM_POOL) serves start_session on tmux and pty, with the fake
 * claude on real tmux and a real pty. A ready spare with the call's cwd and options takes the call's first prompt in
 * its own process (the result's pid is the spare's) and becomes the caller's session; list_sessions shows spares as
 * `spare: true` until taken; the pool refills after a take; team, worktree and chosen-id calls never take a spare;
 * a tmux spare outlives its server and the next server takes it; a pty spare ends with its server.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, hasPty, makeWorld, processesIn, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();
const HAS_PTY = await hasPty();

async function rows(m: Mcp) {
  return (await m.callOk("list_sessions", {})).sessions;
}
type Row = Awaited<ReturnType<typeof rows>>[number];

/** The ready spares of this cwd, once there are `n`. */
async function sparesIn(m: Mcp, cwd: string, n = 1): Promise<Row[]> {
  return until(
    async () => {
      const s = (await rows(m)).filter((r) => r.spare && r.cwd === cwd && r.status === "ready");
      return s.length >= n ? s : undefined;
    },
    20_000,
    100,
  );
}

async function replyOf(m: Mcp, id: string): Promise<string | undefined> {
  const r = await m.callOk("wait_for_completion", { session_id: id, timeout_ms: 15_000 });
  return r.last_response ?? undefined;
}

describe.runIf(HAS_TMUX)("warm pool for start_session (issue #23)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld({ CLAUDE_SESSIONS_WARM_POOL: "1", CLAUDE_SESSIONS_IDLE_TTL_MS: "0" });
  });
  afterAll(() => w?.cleanup());

  const backends = HAS_PTY ? (["tmux", "pty"] as const) : (["tmux"] as const);
  for (const backend of backends) {
    it(`${backend}: start_session takes a ready spare (its first prompt runs in the spare's process) and the pool refills`, async () => {
      const m = await connect(w);
      try {
        const cwd = w.dir(`take-${backend}`);
        const args = { cwd, backend, permission_mode: "default" as const };
        const first = await m.callOk("start_session", { ...args, prompt: "one" });
        expect(await replyOf(m, first.session_id)).toBe("FAKE REPLY: one");
        const [spare] = await sparesIn(m, cwd);
        expect(spare!.session_id).not.toBe(first.session_id);
        expect(spare!.backend).toBe(backend);
        // The caller's own session is no spare.
        expect((await rows(m)).find((r) => r.session_id === first.session_id)?.spare).toBeUndefined();
        const second = await m.callOk("start_session", { ...args, prompt: "two" });
        expect(second.session_id).toBe(spare!.session_id);
        expect(second.pid).toBe(spare!.pid);
        expect(await replyOf(m, second.session_id)).toBe("FAKE REPLY: two");
        const taken = (await rows(m)).find((r) => r.session_id === second.session_id);
        expect(taken?.spare).toBeUndefined();
        // A new spare takes its place.
        const [next] = await sparesIn(m, cwd);
        expect([first.session_id, second.session_id]).not.toContain(next!.session_id);
        // Other options: not this spare.
        const other = await m.callOk("start_session", { ...args, model: "claude-sonnet-4-5" });
        expect(other.session_id).not.toBe(next!.session_id);
        for (const r of await rows(m))
          if (r.cwd === cwd) await m.callOk("kill_session", { session_id: r.session_id, force: true });
      } finally {
        await m.close();
      }
    });
  }

  it("a team call, a worktree call and a call with a chosen session_id never take a spare", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_SETUP_COMMANDS: "touch" });
    try {
      const cwd = w.dir("never");
      const git = (...a: string[]) =>
        execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...a], {
          cwd,
          env: { PATH: process.env.PATH ?? "", HOME: w.home },
        });
      git("init", "-q", "-b", "main");
      writeFileSync(join(cwd, "a.txt"), "a\n");
      git("add", ".");
      git("commit", "-qm", "first");
      const args = { cwd, backend: "tmux" as const, permission_mode: "default" as const };
      await m.callOk("start_session", { ...args, prompt: "seed" });
      const [spare] = await sparesIn(m, cwd);
      const team = await m.callOk("start_session", { ...args, team_name: "crew", prompt: "hello team" });
      const wt = await m.callOk("start_session", { ...args, worktree: true, setup_command: ["touch", "ran"] });
      const chosen = await m.callOk("start_session", { ...args, session_id: "mine-1" });
      for (const s of [team, wt, chosen]) expect(s.session_id).not.toBe(spare!.session_id);
      const after = (await rows(m)).find((r) => r.session_id === spare!.session_id);
      expect(after).toMatchObject({ spare: true, status: "ready" });
      expect(after?.team_name).toBeUndefined();
      // The team's broadcast does not reach it.
      const b = await m.callOk("broadcast_message", { team_name: "crew", message: "all" });
      expect(JSON.stringify(b)).not.toContain(spare!.session_id);
      await m.callOk("kill_session", { session_id: wt.session_id, force: true, remove_worktree: true });
      for (const r of await rows(m))
        if (r.cwd === cwd && r.status !== "dead") await m.callOk("kill_session", { session_id: r.session_id, force: true });
    } finally {
      await m.close();
    }
  });

  it("a tmux spare outlives its server and the next server takes it; a pty spare ends with its server", async () => {
    const cwd = w.dir("restart");
    const m1 = await connect(w);
    let spareId: string;
    let ptySpare: Row | undefined;
    const ptyCwd = w.dir("restart-pty");
    try {
      await m1.callOk("start_session", { cwd, backend: "tmux", permission_mode: "default", prompt: "before" });
      spareId = (await sparesIn(m1, cwd))[0]!.session_id;
      if (HAS_PTY) {
        await m1.callOk("start_session", { cwd: ptyCwd, backend: "pty", permission_mode: "default", prompt: "before" });
        ptySpare = (await sparesIn(m1, ptyCwd))[0];
      }
    } finally {
      await m1.close();
    }
    if (ptySpare) await until(() => processesIn(ptyCwd).length === 0, 10_000);
    const m2 = await connect(w);
    try {
      const adopted = await until(
        async () => (await rows(m2)).find((r) => r.session_id === spareId && r.status === "ready"),
        10_000,
      );
      expect(adopted.spare).toBe(true);
      const s = await m2.callOk("start_session", { cwd, backend: "tmux", permission_mode: "default", prompt: "after" });
      expect(s.session_id).toBe(spareId);
      expect(await replyOf(m2, s.session_id)).toBe("FAKE REPLY: after");
      for (const r of await rows(m2))
        if (r.backend === "tmux" && r.status !== "dead")
          await m2.callOk("kill_session", { session_id: r.session_id, force: true });
    } finally {
      await m2.close();
    }
  });
});

/**
 * Sessions outlive the server: a new server adopts the live ones and marks the vanished ones dead;
 * two servers at once share one state file without losing an update; resume keeps the conversation.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { connect, hasPty, makeWorld, processesIn, tmuxOrSkip, until, type World } from "../helpers/harness.js";

const run = tmuxOrSkip();

function events(w: World, id: string): Array<Record<string, unknown>> {
  return readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe.runIf(run)("restart, adoption, resume and two servers (tmux)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld();
  });
  afterAll(() => w?.cleanup());

  it("a restarted server adopts live sessions and marks vanished ones dead; the adopted one answers", async () => {
    const m1 = await connect(w);
    const a = await m1.call("start_session", { cwd: w.dir("adopt-a") });
    const b = await m1.call("start_session", { cwd: w.dir("adopt-b") });
    const ida = a.data.session_id as string;
    const idb = b.data.session_id as string;
    await m1.call("send_message", { session_id: ida, message: "before restart" });
    await m1.call("send_message", { session_id: ida, message: "FAKE_SLOW:1500 mid-turn", wait_for_response: false });
    await m1.close(); // the server exits; tmux keeps the sessions
    expect(w.tmux(["list-sessions", "-F", "#{session_name}"])).toContain(`cs-${ida}`);
    // One session vanishes while no server runs.
    w.tmux(["kill-session", "-t", `=cs-${idb}`]);

    const m2 = await connect(w);
    const list = await m2.call("list_sessions", {});
    const byId = Object.fromEntries(list.data.sessions.map((s) => [s.session_id, s.status]));
    expect(["busy", "idle"]).toContain(byId[ida]); // replayed from the events log, whatever happened meanwhile
    expect(byId[idb]).toBe("dead");
    const done = await m2.call("wait_for_completion", { session_id: ida, timeout_ms: 10_000 });
    expect(done.data).toMatchObject({ completed: true, last_response: "FAKE REPLY: FAKE_SLOW:1500 mid-turn" });
    const r = await m2.call("send_message", { session_id: ida, message: "after restart" });
    expect(r.data.response).toBe("FAKE REPLY: after restart");
    const dead = await m2.call("send_message", { session_id: idb, message: "hello?" });
    expect(dead.error?.code).toBe("SESSION_DEAD");
    await m2.call("kill_session", { session_id: ida });
    await m2.close();
  });

  it("resume keeps the Claude session id and the conversation; fork gives a new id and leaves the old one", async () => {
    const m = await connect(w);
    const s = await m.call("start_session", { cwd: w.dir("resume") });
    const id = s.data.session_id as string;
    const claudeId = s.data.claude_session_id as string;
    await m.call("send_message", { session_id: id, message: "remember the word pelican" });
    // Claude writes the assistant line of the transcript just after the Stop hook.
    await until(async () => (await m.call("stream_output", { session_id: id, mode: "transcript" })).data.items!.length === 2);
    await m.call("kill_session", { session_id: id });
    const notLive = await m.call("send_message", { session_id: id, message: "x" });
    expect(notLive.error?.code).toBe("SESSION_DEAD");

    const r = await m.call("resume_session", { session_id: id, message: "what was the word?" });
    expect(r.ok, r.text).toBe(true);
    expect(r.data).toMatchObject({ session_id: id, claude_session_id: claudeId, forked: false });
    const again = await m.call("resume_session", { session_id: id });
    expect(again.error?.code).toBe("INVALID_ARGUMENT"); // still running
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data.last_response).toBe("FAKE REPLY: what was the word?");
    // The same transcript holds both turns: the conversation carried over.
    const tr = await until(async () => {
      const t = await m.call("stream_output", { session_id: id, mode: "transcript" });
      return t.data.items!.length >= 4 ? t : undefined;
    });
    expect(tr.data.items!.map((i) => i.text)).toEqual(
      expect.arrayContaining(["remember the word pelican", "what was the word?"]),
    );
    const ev = events(w, id);
    expect(ev.filter((e) => e.hook_event_name === "SessionStart").map((e) => e.source)).toEqual(["startup", "resume"]);

    await m.call("kill_session", { session_id: id });
    const f = await m.call("resume_session", { session_id: id, fork: true, message: "forked turn" });
    expect(f.ok, f.text).toBe(true);
    expect(f.data.forked).toBe(true);
    expect(f.data.claude_session_id).not.toBe(claudeId);
    // A fork is a new session; the ended parent keeps its record and conversation.
    expect(f.data.session_id).not.toBe(id);
    expect(f.data.forked_from).toBe(id);
    await m.call("wait_for_completion", { session_id: f.data.session_id, timeout_ms: 10_000 });
    const list = await m.call("list_sessions", {});
    expect(list.data.sessions.find((x) => x.session_id === f.data.session_id)?.claude_session_id).toBe(f.data.claude_session_id);
    expect(list.data.sessions.find((x) => x.session_id === id)).toMatchObject({ claude_session_id: claudeId, status: "dead" });
    await m.call("kill_session", { session_id: f.data.session_id });
    // The old conversation is untouched: its transcript has no forked turn.
    const oldTranscript = readFileSync(
      join(w.home, ".claude", "projects", w.dir("resume").replace(/[^A-Za-z0-9]/g, "-"), `${claudeId}.jsonl`),
      "utf8",
    );
    expect(oldTranscript).not.toContain("forked turn");
    await m.call("kill_session", { session_id: id });

    // A conversation this server never started can be adopted by its Claude id and cwd.
    const adopted = await m.call("resume_session", { claude_session_id: claudeId, cwd: w.dir("resume") });
    expect(adopted.ok, adopted.text).toBe(true);
    expect(adopted.data.claude_session_id).toBe(claudeId);
    await m.call("kill_session", { session_id: adopted.data.session_id as string });
    await m.close();
  });

  it("two resume_session calls of one session at once start one process; both get it", async () => {
    const m = await connect(w);
    const s = await m.callOk("start_session", { cwd: w.dir("twice"), prompt: "first" });
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    await m.callOk("kill_session", { session_id: s.session_id });
    const spawns = () =>
      readFileSync(join(w.stateDir, s.session_id, "events.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l.includes('"cs:spawn"')).length;
    const before = spawns();
    const [a, b] = await Promise.all([1, 2].map(() => m.call("resume_session", { session_id: s.session_id })));
    expect(a!.ok, a!.text).toBe(true);
    expect(b!.ok, b!.text).toBe(true);
    expect(a!.data.pid).toBe(b!.data.pid);
    expect([a!.data.already_running, b!.data.already_running].filter(Boolean)).toHaveLength(1);
    expect(spawns()).toBe(before + 1);
    expect((await m.callOk("send_message", { session_id: s.session_id, message: "after" })).response).toBe("FAKE REPLY: after");
    await m.callOk("kill_session", { session_id: s.session_id });
    await m.close();
  });

  it("a session whose process outlives its SessionEnd is listed as zombie, and kill_session ends it", async () => {
    const m = await connect(w);
    const s = await m.call("start_session", { cwd: w.dir("zombie") });
    const id = s.data.session_id as string;
    // As if Claude had reported its end but the process (or a wrapper such as doppler) hangs on.
    execFileSync(join(w.stateDir, "bin", "hook.sh"), [join(w.stateDir, id, "events.jsonl")], {
      input: JSON.stringify({ hook_event_name: "SessionEnd", reason: "other" }) + "\n",
    });
    const z = await until(async () => {
      const l = await m.call("list_sessions", {});
      return l.data.sessions.find((x) => x.session_id === id && x.status === "zombie");
    });
    expect(z).toMatchObject({ session_id: id, status: "zombie" });
    const errs = await m.call("list_sessions", { status_filter: "error" });
    expect(errs.data.sessions.map((x) => x.session_id)).toContain(id);
    const k = await m.call("kill_session", { session_id: id });
    expect(k.data.status).toBe("killed");
    await until(() => processesIn(w.dir("zombie")).length === 0, 5000);
    await m.close();
  });

  it("two servers at once see and change the same sessions without losing an update", async () => {
    const [m1, m2] = await Promise.all([connect(w), connect(w)]);
    const starts = await Promise.all(
      [0, 1, 2].flatMap((i) => [
        m1.call("start_session", { cwd: w.dir(`two-${i}`) }),
        m2.call("start_session", { cwd: w.dir(`two-${i}`) }),
      ]),
    );
    for (const s of starts) expect(s.ok, s.text).toBe(true);
    const ids = starts.map((s) => s.data.session_id as string);
    for (const m of [m1, m2]) {
      const l = await m.call("list_sessions", { status_filter: "active" });
      expect(l.data.sessions.map((s) => s.session_id)).toEqual(expect.arrayContaining(ids));
    }
    // Server 2 drives a session that server 1 started, and server 1 sees the result.
    const r = await m2.call("send_message", { session_id: ids[0], message: "from the other server" });
    expect(r.data.response).toBe("FAKE REPLY: from the other server");
    const seen = await until(async () => {
      const l = await m1.call("list_sessions", {});
      return l.data.sessions.find((s) => s.session_id === ids[0] && s.turn_count === 1);
    });
    // The first server sees the turn the second one drove (through the shared events log).
    expect(seen).toMatchObject({ session_id: ids[0], turn_count: 1 });
    await Promise.all(ids.map((id, i) => (i % 2 ? m1 : m2).call("kill_session", { session_id: id })));
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8"));
    for (const id of ids) expect(state.sessions[id].status).toBe("dead");
    await Promise.all([m1.close(), m2.close()]);
  });
});

const pty = await hasPty();

describe.runIf(pty || process.env.CI)("pty sessions end with their server (pty)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "pty" });
  });
  afterAll(() => w?.cleanup());

  it("on shutdown the server ends its pty sessions gracefully and records them hibernated (issue #23) and resumable", async () => {
    const m1 = await connect(w);
    const s = await m1.call("start_session", { cwd: w.dir("pty-a") });
    expect(s.data).toMatchObject({ backend: "pty", status: "ready" });
    const id = s.data.session_id as string;
    await m1.call("send_message", { session_id: id, message: "remember otters" });
    await until(async () => (await m1.call("stream_output", { session_id: id, mode: "transcript" })).data.items!.length === 2);
    const listed = await m1.call("list_sessions", {});
    expect(listed.data.sessions[0]?.survives_restart).toBe(false);
    await m1.close(); // stdin closes: the server shuts down
    await until(() => processesIn(w.dir("pty-a")).length === 0, 10_000);
    const ev = readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8");
    expect(ev).toContain('"hook_event_name":"SessionEnd"');
    // An end the server itself made: in the audit log with actor server:shutdown.
    const ended = await until(
      async () => (await readAudit(w.stateDir)).find((x) => x.session_id === id && x.actor === "server:shutdown"),
      5000,
    );
    expect(ended).toMatchObject({ tool: "kill_session", outcome: "ok" });

    const m2 = await connect(w);
    const l = await m2.call("list_sessions", {});
    expect(l.data.sessions.find((x) => x.session_id === id)?.status).toBe("hibernated");
    const r = await m2.call("resume_session", { session_id: id, message: "which animal?" });
    expect(r.ok, r.text).toBe(true);
    const done = await m2.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data.last_response).toBe("FAKE REPLY: which animal?");
    await m2.call("kill_session", { session_id: id });
    await m2.close();
  });
});

/** Issue 31 item 4: the server of pty and headless sessions is killed (-9), so no clean shutdown hibernated them. */
describe.each(["pty", "headless"] as const)(
  "a killed server's %s sessions come back hibernated when they had a conversation",
  (backend) => {
    let w: World;
    beforeAll(() => {
      w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend });
    });
    afterAll(() => w?.cleanup());

    it.runIf(backend === "headless" || pty || process.env.CI)(
      "kill -9 of the server: the session with a conversation is hibernated and the next prompt resumes it; a fresh one is dead",
      async () => {
        const m1 = await connect(w);
        const talked = await m1.callOk("start_session", { cwd: w.dir(`${backend}-talked`) });
        const fresh = await m1.callOk("start_session", { cwd: w.dir(`${backend}-fresh`) });
        await m1.callOk("send_message", { session_id: talked.session_id, message: "remember herons" });
        process.kill(m1.pid!, "SIGKILL");
        await until(
          () => processesIn(w.dir(`${backend}-talked`)).length === 0 && processesIn(w.dir(`${backend}-fresh`)).length === 0,
          15_000,
        );
        const m2 = await connect(w);
        try {
          const rows = (await m2.callOk("list_sessions", { status_filter: "all" })).sessions;
          expect(rows.find((x) => x.session_id === talked.session_id)?.status).toBe("hibernated");
          expect(rows.find((x) => x.session_id === fresh.session_id)?.status).toBe("dead");
          const r = await m2.callOk("send_message", { session_id: talked.session_id, message: "which bird?" });
          expect(r).toMatchObject({ completed: true, woke: true, response: "FAKE REPLY: which bird?" });
          // The same conversation: its transcript holds the prompt from before the kill.
          const t = await m2.callOk("stream_output", { session_id: talked.session_id, mode: "transcript" });
          expect(t.items?.filter((i) => i.role === "user").map((i) => i.text)).toEqual(["remember herons", "which bird?"]);
          const row = (await m2.callOk("list_sessions", {})).sessions.find((x) => x.session_id === talked.session_id);
          expect(row?.claude_session_id).toBe(talked.claude_session_id);
          await m2.callOk("kill_session", { session_id: talked.session_id });
        } finally {
          await m2.close();
        }
      },
    );
  },
);

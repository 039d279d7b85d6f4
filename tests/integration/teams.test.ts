/**
 * Teams over MCP (issue #13): three sessions of one team on real tmux with the fake claude. Addressing by
 * team_name + teammate_name, broadcast_message (exactly once each, a member killed mid-broadcast), wait_for_sessions
 * any/all with a slow member and one at a permission dialog.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptsOf as promptsIn } from "../helpers/events.js";
import { connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const promptsOf = (w: World, id: string) => promptsIn(w.stateDir, id);

const TMUX = tmuxOrSkip();

describe.runIf(TMUX)("teams (tmux, fake claude)", () => {
  let w: World;
  let m: Mcp;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    m = await connect(w);
    const started = await Promise.all([
      m.callOk("start_session", { cwd: w.dir("t1"), team_name: "rev" }),
      m.callOk("start_session", { cwd: w.dir("t2"), team_name: "rev" }),
      m.callOk("start_session", { cwd: w.dir("t3"), team_name: "rev", teammate_name: "carol" }),
    ]);
    for (const s of started) ids[s.teammate_name!] = s.session_id;
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("gives members without a name unique readable ones, and refuses a second live teammate of the same name", async () => {
    expect(Object.keys(ids).sort()).toEqual(["carol", "member-1", "member-2"]);
    const dup = await m.call("start_session", { cwd: w.dir("t4"), team_name: "rev", teammate_name: "carol" });
    expect(dup.error?.code).toBe("INVALID_ARGUMENT");
    expect(dup.error?.message).toContain("carol");
    const listed = await m.callOk("list_sessions", { team_filter: "rev" });
    expect(listed.sessions.map((s) => s.teammate_name).sort()).toEqual(["carol", "member-1", "member-2"]);
  });

  it("a team or teammate name with a control character (C0, DEL, C1) is refused before anything is recorded", async () => {
    const before = (await m.callOk("list_sessions", { status_filter: "all" })).sessions.length;
    for (const bad of ["a\0b", "esc\x1b[31m", "bell\x07", "del\x7f", "c1\x9b2J", "line\nbreak"]) {
      for (const args of [{ team_name: bad }, { team_name: "rev", teammate_name: bad }]) {
        const r = await m.call("start_session", { cwd: w.dir("bad-name"), ...args });
        expect(r.error?.code, JSON.stringify(args)).toBe("INVALID_ARGUMENT");
        expect(r.error?.message).toContain("control characters");
      }
    }
    const sent = await m.call("send_message", { team_name: "rev", teammate_name: "carol\0", message: "x" });
    expect(sent.error?.code).toBe("INVALID_ARGUMENT");
    // Nothing was started: no record at all, not even an errored one.
    const after = await m.callOk("list_sessions", { status_filter: "all" });
    expect(after.sessions.length).toBe(before);
    expect(after.sessions.filter((s) => s.status === "error")).toEqual([]);
  });

  it("every session tool takes team_name + teammate_name instead of session_id", async () => {
    const r = await m.callOk("send_message", { team_name: "rev", teammate_name: "carol", message: "who are you" });
    expect(r).toMatchObject({ session_id: ids.carol, response: "FAKE REPLY: who are you" });
    const wr = await m.callOk("wait_for_completion", { team_name: "rev", teammate_name: "carol", timeout_ms: 2000 });
    expect(wr).toMatchObject({ session_id: ids.carol, completed: true });
    // The screen is drawn a moment after the Stop hook: read it until it shows the reply.
    await until(
      async () =>
        (await m.callOk("stream_output", { team_name: "rev", teammate_name: "carol", mode: "screen" })).text!.includes(
          "FAKE REPLY: who are you",
        ),
      5000,
    );
    const both = await m.call("send_message", { session_id: ids.carol, team_name: "rev", teammate_name: "carol", message: "x" });
    expect(both.error?.code).toBe("INVALID_ARGUMENT");
    const none = await m.call("send_message", { team_name: "rev", teammate_name: "nobody", message: "x" });
    expect(none.error?.code).toBe("SESSION_NOT_FOUND");
    const half = await m.call("send_message", { team_name: "rev", message: "x" });
    expect(half.error?.code).toBe("INVALID_ARGUMENT");
  });

  it("broadcast_message delivers to every member exactly once, with a reply each and one progress stream", async () => {
    const progress: unknown[] = [];
    const msg = "broadcast: review the diff";
    const r = await m.callOk("broadcast_message", { team_name: "rev", message: msg }, { onprogress: (p) => progress.push(p) });
    expect(r.sent_count).toBe(3);
    expect(r.failed_count).toBe(0);
    expect(r.results.map((x) => x.teammate_name).sort()).toEqual(["carol", "member-1", "member-2"]);
    for (const x of r.results)
      expect(x).toMatchObject({ message_sent: true, completed: true, final_state: "idle", response: `FAKE REPLY: ${msg}` });
    for (const id of Object.values(ids)) expect(promptsOf(w, id).filter((p) => p === msg)).toHaveLength(1);
    expect(progress.length).toBeGreaterThan(0);
    const values = progress.map((p) => (p as { progress: number }).progress);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    // A bad message fails the whole call before anything is typed anywhere.
    const bad = await m.call("broadcast_message", { team_name: "rev", message: "bad \x1b[201~ paste" });
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
    const none = await m.call("broadcast_message", { team_name: "nobody-here", message: "x" });
    expect(none.error?.code).toBe("SESSION_NOT_FOUND");
  });

  it("wait_for_sessions: any returns at the first member done (a permission dialog counts), all when every one is", async () => {
    await m.callOk("send_message", { session_id: ids["member-1"], message: "FAKE_SLOW:1200 slow one", wait_for_response: false });
    await m.callOk("send_message", {
      session_id: ids["member-2"],
      message: "FAKE_SLOW:4000 slower one",
      wait_for_response: false,
    });
    await m.callOk("send_message", { session_id: ids.carol, message: "FAKE_BASH:true", wait_for_response: false });
    const t0 = Date.now();
    const any = await m.callOk("wait_for_sessions", { team_name: "rev", mode: "any", timeout_ms: 10_000 });
    expect(any.done).toBe(true);
    expect(Date.now() - t0).toBeLessThan(3500);
    const byName = Object.fromEntries(any.sessions.map((s) => [s.teammate_name, s]));
    expect(byName["member-2"]).toMatchObject({ done: false, final_state: "busy" });
    expect(any.sessions.some((s) => s.done)).toBe(true);

    const progress: unknown[] = [];
    const all = await m.callOk(
      "wait_for_sessions",
      { session_ids: Object.values(ids), mode: "all", timeout_ms: 15_000 },
      { onprogress: (p) => progress.push(p) },
    );
    expect(all).toMatchObject({ done: true, timed_out: false });
    const after = Object.fromEntries(all.sessions.map((s) => [s.teammate_name, s]));
    expect(after["member-1"]).toMatchObject({
      done: true,
      final_state: "idle",
      last_response: "FAKE REPLY: FAKE_SLOW:1200 slow one",
    });
    expect(after["member-2"]).toMatchObject({
      done: true,
      final_state: "idle",
      last_response: "FAKE REPLY: FAKE_SLOW:4000 slower one",
    });
    expect(after.carol).toMatchObject({
      done: true,
      final_state: "waiting_for_permission",
      pending_permission: { tool_name: "Bash" },
    });
    expect(progress.length).toBeGreaterThan(0);
    await m.callOk("respond_permission", { team_name: "rev", teammate_name: "carol", decision: "allow" });
    await m.callOk("wait_for_completion", { team_name: "rev", teammate_name: "carol", timeout_ms: 10_000 });
  });

  it("wait_for_sessions times out honestly and stops when cancelled", async () => {
    await m.callOk("send_message", { session_id: ids["member-1"], message: "FAKE_SLOW:3000 long", wait_for_response: false });
    const r = await m.callOk("wait_for_sessions", { session_ids: [ids["member-1"]!], mode: "all", timeout_ms: 300 });
    expect(r).toMatchObject({ done: false, timed_out: true });
    const ac = new AbortController();
    const p = m.call("wait_for_sessions", { team_name: "rev", mode: "all", timeout_ms: 60_000 }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await expect(p).rejects.toThrow();
    await m.callOk("wait_for_completion", { session_id: ids["member-1"], timeout_ms: 10_000 });
  });

  it("a member killed mid-broadcast gets its own error; the others complete", async () => {
    const msg = "FAKE_SLOW:1500 everyone";
    const b = m.callOk("broadcast_message", { team_name: "rev", message: msg, timeout_ms: 15_000 });
    // Mid-broadcast: every member has taken the prompt and is busy with it.
    await until(
      async () =>
        (await m.callOk("list_sessions", {})).sessions.filter((x) => x.team_name === "rev" && x.status === "busy").length === 3,
      10_000,
    );
    await m.callOk("kill_session", { team_name: "rev", teammate_name: "member-2", force: true });
    const r = await b;
    const by = Object.fromEntries(r.results.map((x) => [x.teammate_name, x]));
    expect(by["member-2"]!.error?.code).toBe("SESSION_DEAD");
    for (const n of ["member-1", "carol"])
      expect(by[n]).toMatchObject({ message_sent: true, completed: true, response: `FAKE REPLY: ${msg}` });
    expect(r.failed_count).toBe(1);
    for (const id of [ids["member-1"]!, ids.carol!]) expect(promptsOf(w, id).filter((p) => p === msg)).toHaveLength(1);
    // The dead member's name is free for a new live session again (ended members keep theirs for resume).
    const again = await m.callOk("start_session", { cwd: w.dir("t5"), team_name: "rev", teammate_name: "member-2" });
    expect(again.teammate_name).toBe("member-2");
    const next = await m.callOk("broadcast_message", { team_name: "rev", message: "after", wait_for_response: false });
    expect(next.results).toHaveLength(3);
  });
});

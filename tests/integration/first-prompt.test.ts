/**
 * Issue #23 (speed): a start's first prompt travels with the launch where the runner can send it so. Headless: the
 * prompt is in the Agent SDK's input from the spawn, and the CLI takes it once it is up (as `claude -p` does), with
 * no wait for ready and no delivery in between. tmux and pty: the prompt is the CLI's positional argument after `--`
 * (in the hand-off file or node-pty's argv: no shell, no tmux parser, no keys), submitted by the CLI itself; one too
 * long for a command line is pasted as before. The contracts stay: the events log reads cs:spawn, SessionStart,
 * UserPromptSubmit, Stop; run_task returns the first turn's result; start_session {prompt} returns with the prompt
 * taken and counted. Through the built server and the fake claude (which reports when the first prompt reached it).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, contractBackends, makeWorld, type Mcp, type World } from "../helpers/harness.js";
import { eventNamesOf } from "../helpers/events.js";

interface Reported {
  session_id: string;
  first_prompt?: string;
  before_session_start?: boolean;
}

describe("the first prompt travels with the launch (headless)", () => {
  let w: World;
  let m: Mcp;
  let report: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    report = join(w.root, "report.jsonl");
    // A CLI that takes a while to start: a prompt sent only once it is ready would arrive after its SessionStart.
    m = await connect(w, { FAKE_CLAUDE_FIRST_PROMPT_LOG: report, FAKE_CLAUDE_STARTUP_MS: "400" });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  const reported = (claudeId: string): Reported | undefined =>
    readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Reported)
      .find((x) => x.session_id === claudeId && x.first_prompt !== undefined);
  const names = (id: string) =>
    readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { hook_event_name: string }).hook_event_name);

  it("run_task: the CLI has the prompt before it reports SessionStart; the result and the log are a turn's as before", async () => {
    const r = await m.callOk("run_task", {
      cwd: w.dir("task"),
      prompt: "first  \tprompt\nline two",
      keep_session: true,
      wait_for_usage: true,
    });
    expect(r).toMatchObject({
      completed: true,
      timed_out: false,
      final_state: "idle",
      response: "FAKE REPLY: first  \tprompt\nline two",
      kept: true,
      backend: "headless",
      session_turns: 1,
    });
    expect(reported(r.claude_session_id)).toMatchObject({
      first_prompt: "first  \tprompt\nline two",
      before_session_start: true,
    });
    expect(names(r.session_id)).toEqual(["cs:spawn", "SessionStart", "UserPromptSubmit", "Stop"]);
    const row = (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === r.session_id);
    expect(row).toMatchObject({ status: "idle", turn_count: 1 });
    // The session goes on like any other.
    const again = await m.callOk("send_message", { session_id: r.session_id, message: "again", wait_for_usage: true });
    expect(again).toMatchObject({ completed: true, response: "FAKE REPLY: again", session_turns: 2 });
    await m.callOk("kill_session", { session_id: r.session_id });
  });

  it("start_session {prompt}: returns once the prompt became a turn, counted once; a send waits for that turn's end", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("start"), prompt: "FAKE_SLOW:300 carried" });
    expect(["busy", "idle"]).toContain(s.status);
    expect(reported(s.claude_session_id)).toMatchObject({ first_prompt: "FAKE_SLOW:300 carried", before_session_start: true });
    const done = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    expect(done).toMatchObject({ completed: true, last_response: "FAKE REPLY: FAKE_SLOW:300 carried" });
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { messages_sent: number; last_message: string }>;
    };
    expect(state.sessions[s.session_id]).toMatchObject({ messages_sent: 1, last_message: "FAKE_SLOW:300 carried" });
    expect(names(s.session_id)).toEqual(["cs:spawn", "SessionStart", "UserPromptSubmit", "Stop"]);
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("resume_session {message}: the message is in the SDK's input before the resumed CLI reports SessionStart", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("resume"), prompt: "before" });
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    await m.callOk("kill_session", { session_id: s.session_id });
    const r = await m.callOk("resume_session", { session_id: s.session_id, message: "after resume" });
    const got = readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Reported)
      .filter((x) => x.session_id === s.claude_session_id && x.first_prompt === "after resume");
    expect(got).toEqual([{ session_id: s.claude_session_id, first_prompt: "after resume", before_session_start: true }]);
    const done = await m.callOk("wait_for_completion", { session_id: r.session_id, timeout_ms: 10_000 });
    expect(done).toMatchObject({ completed: true, last_response: "FAKE REPLY: after resume" });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("run_task cancelled the moment its prompt became a turn (before the start returned) does not leave that turn running", async () => {
    const id = "cancelrace1";
    const ac = new AbortController();
    const p = m.call(
      "run_task",
      { cwd: w.dir("cancel"), session_id: id, prompt: "FAKE_SLOW:20000 cancel me" },
      { signal: ac.signal },
    );
    const names = () => eventNamesOf(w.stateDir, id);
    for (const until = Date.now() + 15_000; !names().includes("UserPromptSubmit") && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 1));
    ac.abort();
    await p.catch(() => undefined); // the call ends cancelled
    // The turn ends within moments: interrupted (the call was past the start), or with its process (a start cancelled
    // while it waited for the CLI); it does not run on for 20 s with nobody waiting for it.
    for (const until = Date.now() + 5_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      const n = names();
      if (n.includes("cs:interrupted") || n.includes("cs:exit")) break;
    }
    const n = names();
    expect(n.includes("cs:interrupted") || n.includes("cs:exit"), n.join(",")).toBe(true);
    expect(n).not.toContain("Stop");
    await m.call("kill_session", { session_id: id, force: true });
  });

  it("run_task cancelled the moment its process started (before SessionStart) interrupts the task's turn and keeps the session", async () => {
    // The process holds the carried prompt from its spawn, so the cancel is the turn's interrupt, not the start's end,
    // whenever it comes: a rule that does not hang on whether SessionStart was in yet.
    const id = `cancelrace2${Date.now().toString(36)}`; // a fresh id on a retry
    const ac = new AbortController();
    const p = m.call(
      "run_task",
      // A start-up of 1.5 s (the initialize answer, and with it SessionStart, comes after it): time to see the pid first.
      {
        cwd: w.dir("cancel2"),
        session_id: id,
        prompt: "FAKE_SLOW:20000 cancel me early",
        env: { FAKE_CLAUDE_STARTUP_MS: "1500" },
      },
      { signal: ac.signal },
    );
    const names = () => eventNamesOf(w.stateDir, id);
    // The process's pid in the record: it was spawned with the prompt.
    const pid = () => {
      try {
        return (
          JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as { sessions: Record<string, { pid?: number }> }
        ).sessions[id]?.pid;
      } catch {
        return undefined; // caught between the write and the rename
      }
    };
    for (const until = Date.now() + 15_000; pid() === undefined && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 1));
    expect(names()).not.toContain("SessionStart");
    ac.abort();
    await p.catch(() => undefined);
    for (const until = Date.now() + 10_000; !names().includes("cs:interrupted") && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 20));
    const n = names();
    expect(n, n.join(",")).toContain("cs:interrupted");
    expect(n).not.toContain("Stop");
    expect(n).not.toContain("cs:exit");
    const done = await m.call("wait_for_completion", { session_id: id, timeout_ms: 10_000 });
    expect(done.data, done.text).toMatchObject({ completed: true, turn_outcome: "interrupted" });
    const listed = await m.callOk("list_sessions", {});
    expect(listed.sessions.find((x) => x.session_id === id)?.status).toBe("idle"); // alive, its turn over
    await m.call("kill_session", { session_id: id, force: true });
  });

  it("run_task {keep_session: false} ends the session after the reply; a CLI that dies at start-up is the start's error", async () => {
    const r = await m.callOk("run_task", { cwd: w.dir("once"), prompt: "one shot", keep_session: false });
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: one shot", kept: false });
    const bad = await m.call("run_task", { cwd: w.dir("crash"), prompt: "FAKE_CRASH now" });
    expect(bad.ok).toBe(false);
    expect(["SESSION_DEAD", "PROCESS_ERROR"]).toContain(bad.error?.code);
  });
});

const TERMINALS = await contractBackends();

describe.each(TERMINALS)("the first prompt travels with the launch (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  let argvLog: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend });
    argvLog = join(w.root, "argv.jsonl");
    m = await connect(w, { FAKE_CLAUDE_ARGV_LOG: argvLog });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  const argvOf = (claudeId: string) =>
    readFileSync(argvLog, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { argv: string[]; session_id: string })
      .find((x) => x.session_id === claudeId)?.argv;
  const events = (id: string) =>
    readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { hook_event_name: string; prompt?: string });

  it("start_session {prompt}: the prompt is the CLI's argument after `--`, taken byte-exact with no paste; the record's command leaves it out", async () => {
    const prompt = "--help ; $(touch pwned) `id` #{pane_id} 'q' \"dq\"\n\ttab and  trailing  \n#hash line ✓";
    const cwd = w.dir("argv");
    const s = await m.callOk("start_session", { cwd, prompt });
    const argv = argvOf(s.claude_session_id)!;
    expect(argv.slice(-2)).toEqual(["--", prompt]);
    const evs = events(s.session_id);
    expect(evs.map((e) => e.hook_event_name).slice(0, 3)).toEqual(["cs:spawn", "SessionStart", "UserPromptSubmit"]);
    expect(evs.find((e) => e.hook_event_name === "UserPromptSubmit")?.prompt).toBe(prompt);
    const done = await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    expect(done).toMatchObject({ completed: true, last_response: `FAKE REPLY: ${prompt}` });
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { command: string; args: string[]; messages_sent: number }>;
    };
    const rec = state.sessions[s.session_id]!;
    expect(rec.messages_sent).toBe(1);
    expect([rec.command, ...rec.args].join(" ")).not.toContain("pwned");
    expect(readdirSync(cwd)).not.toContain("pwned");
    // The session takes typed prompts as usual afterwards.
    const next = await m.callOk("send_message", { session_id: s.session_id, message: "typed" });
    expect(next).toMatchObject({ completed: true, response: "FAKE REPLY: typed" });
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("run_task on a terminal starts with its prompt on the command line and returns the first turn's result", async () => {
    const r = await m.callOk("run_task", { cwd: w.dir("task"), backend, prompt: "a task", keep_session: false });
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: a task", kept: false, backend });
    expect(argvOf(r.claude_session_id)?.slice(-2)).toEqual(["--", "a task"]);
  });

  it("resume_session {message} and a fork's message travel the same way (after --resume … --)", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("resume"), prompt: "the word is ostrich" });
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    await m.callOk("kill_session", { session_id: s.session_id });
    const r = await m.callOk("resume_session", { session_id: s.session_id, message: "which word?" });
    const argv = readFileSync(argvLog, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { argv: string[] })
      .map((x) => x.argv)
      .filter((a) => a.includes(`--resume=${s.claude_session_id}`));
    expect(argv.at(-1)?.slice(-2)).toEqual(["--", "which word?"]);
    const done = await m.callOk("wait_for_completion", { session_id: r.session_id, timeout_ms: 10_000 });
    expect(done).toMatchObject({ completed: true, last_response: "FAKE REPLY: which word?" });
    const f = await m.callOk("resume_session", { session_id: s.session_id, fork: true, message: "forked turn" });
    expect(argvOf(f.claude_session_id!)?.slice(-2)).toEqual(["--", "forked turn"]);
    const fd = await m.callOk("wait_for_completion", { session_id: f.session_id, timeout_ms: 10_000 });
    expect(fd).toMatchObject({ completed: true, last_response: "FAKE REPLY: forked turn" });
    for (const id of [s.session_id, f.session_id]) await m.callOk("kill_session", { session_id: id, force: true });
  });

  it("a wake carries send_message's prompt (after --resume … --); a prompt sent during the wake goes after that turn, once", async () => {
    // A server whose Claude takes 800 ms to start: the second prompt surely arrives while the first one's wake runs.
    const slow = await connect(w, { FAKE_CLAUDE_ARGV_LOG: argvLog, FAKE_CLAUDE_STARTUP_MS: "800" });
    const s = await slow.callOk("start_session", { cwd: w.dir("wake"), prompt: "the word is heron" });
    await slow.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });
    expect(await slow.callOk("kill_session", { session_id: s.session_id, hibernate: true })).toMatchObject({
      status: "hibernated",
    });
    const first = slow.callOk("send_message", {
      session_id: s.session_id,
      message: "FAKE_SLOW:300 wake with this",
      timeout_ms: 20_000,
    });
    // The second prompt once the wake is under way (the record says starting: the first call is the waking one).
    for (let i = 0; i < 200; i++) {
      const row = (await slow.callOk("list_sessions", {})).sessions.find((x) => x.session_id === s.session_id);
      if (row?.status === "starting") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = slow.callOk("send_message", { session_id: s.session_id, message: "and then this", timeout_ms: 20_000 });
    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ completed: true, woke: true, response: "FAKE REPLY: FAKE_SLOW:300 wake with this" });
    expect(b).toMatchObject({ completed: true, response: "FAKE REPLY: and then this" });
    const resumed = readFileSync(argvLog, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { argv: string[] })
      .map((x) => x.argv)
      .filter((x) => x.includes(`--resume=${s.claude_session_id}`));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.slice(-2)).toEqual(["--", "FAKE_SLOW:300 wake with this"]);
    const prompts = events(s.session_id)
      .filter((e) => e.hook_event_name === "UserPromptSubmit")
      .map((e) => e.prompt);
    expect(prompts).toEqual(["the word is heron", "FAKE_SLOW:300 wake with this", "and then this"]);
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { messages_sent: number; last_message: string }>;
    };
    expect(state.sessions[s.session_id]).toMatchObject({ messages_sent: 3, last_message: "and then this" });
    await slow.callOk("kill_session", { session_id: s.session_id, force: true });
    await slow.close();
  });

  it("a first prompt too long for a command line (over 100,000 bytes) is pasted as before", async () => {
    const prompt = "日".repeat(34_000); // 102,000 bytes in UTF-8
    const s = await m.callOk("start_session", { cwd: w.dir("long"), prompt });
    expect(argvOf(s.claude_session_id)).not.toContain("--");
    expect(events(s.session_id).find((e) => e.hook_event_name === "UserPromptSubmit")?.prompt).toBe(prompt);
    await m.callOk("kill_session", { session_id: s.session_id, force: true });
  }, 60_000);
});

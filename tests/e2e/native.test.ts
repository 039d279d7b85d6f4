/**
 * Claude Code's own background sessions (claude --bg), with the real CLI against the mock API: list_sessions
 * {include_native} lists them as `claude agents --json` does, send_message {native_session_id} types into a running
 * idle one through `claude attach`, continues a stopped one with `claude --bg --resume`, and refuses a waiting one.
 * The test starts and stops the background sessions with the CLI itself (in the world's HOME, never the real one).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, REAL_CLAUDE, realClaudeOrSkip, realClaudeVersion, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

interface Native {
  id?: string;
  kind: string;
  state?: string;
  status?: string;
  cwd?: string;
  claude_session_id?: string;
  pid?: number;
  attach_command?: string;
}

describe.runIf(run)("real claude: Claude Code's own background sessions", () => {
  let e: E2e;
  let m: Mcp;
  const started: string[] = [];
  /**
   * Whether the CLI's background sessions talk to the mock. 2.1.330 and 2.1.331 pass ANTHROPIC_BASE_URL on to them;
   * 2.1.197's background service does not (they go to api.anthropic.com and get 403 through the proxy), so there
   * a delivered prompt is checked in the conversation's transcript only, and no tool call can be provoked.
   */
  let viaMock = false;
  let conversation = "";

  /** The user prompts of a conversation, from the CLI's transcript in the world's HOME. */
  function transcriptPrompts(cwd: string, claudeSessionId: string): string[] {
    const f = e.transcriptFile(cwd, claudeSessionId);
    if (!existsSync(f)) return [];
    const out: string[] = [];
    for (const line of readFileSync(f, "utf8").split("\n")) {
      try {
        const j = JSON.parse(line) as { type?: string; message?: { role?: string; content?: unknown } };
        if (j.type === "user" && typeof j.message?.content === "string") out.push(j.message.content);
      } catch {
        /* a line being written */
      }
    }
    return out;
  }

  /** The prompt is in the conversation (every version), and reached the API with the earlier ones when the CLI uses the mock. */
  async function delivered(cwd: string, claudeSessionId: string, text: string, earlier: string[]): Promise<void> {
    const end = Date.now() + 30_000;
    while (Date.now() < end && !transcriptPrompts(cwd, claudeSessionId).includes(text)) await sleep(200);
    const prompts = transcriptPrompts(cwd, claudeSessionId);
    expect(prompts, "the conversation's transcript").toContain(text);
    expect(prompts).toEqual(expect.arrayContaining(earlier));
    if (viaMock) {
      await mockSaw(text);
      expect(e.userTexts(e.requestsWith(text)[0]!)).toEqual(expect.arrayContaining(earlier));
    }
  }

  /** Runs the CLI the way a person would in a terminal of that HOME (argv, no shell). */
  function cli(args: string[], cwd: string): { status: number | null; out: string } {
    const r = spawnSync(REAL_CLAUDE, args, {
      cwd,
      env: { ...e.world.env, PATH: process.env.PATH ?? "" },
      encoding: "utf8",
      timeout: 60_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  }

  async function natives(): Promise<Native[]> {
    const r = await m.call("list_sessions", { include_native: true });
    expect(r.ok, r.text).toBe(true);
    expect(r.data.native_error).toBeUndefined();
    return r.data.native_sessions ?? [];
  }

  /** Polls list_sessions {include_native} until `pred` holds for the session `id` (the CLI's own list, as it changes). */
  async function until(id: string, pred: (s: Native) => boolean, what: string, ms = 30_000): Promise<Native> {
    const end = Date.now() + ms;
    let last: Native | undefined;
    while (Date.now() < end) {
      last = (await natives()).find((s) => s.id === id);
      if (last && pred(last)) return last;
      await sleep(300);
    }
    throw new Error(`background session ${id}: ${what} did not happen within ${ms} ms; last seen ${JSON.stringify(last)}`);
  }

  async function mockSaw(text: string, ms = 30_000): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end && e.requestsWith(text).length === 0) await sleep(200);
    expect(e.requestsWith(text).length, `the API never got ${JSON.stringify(text)}`).toBeGreaterThan(0);
  }

  function startBg(cwd: string, prompt: string, mode = "default"): string {
    const r = cli(["--bg", "--permission-mode", mode, prompt], cwd);
    expect(r.status, r.out).toBe(0);
    const id = /backgrounded · ([A-Za-z0-9_-]+)/.exec(r.out)?.[1];
    expect(id, r.out).toBeTruthy();
    started.push(id!);
    return id!;
  }

  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["bg", "bg-wait", "outside", "managed", "bg-mode"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    if (e) {
      // The CLI's own background service (started by the `claude --bg` calls above) ends with its sessions.
      for (const id of started) cli(["stop", id], e.dir("bg"));
      cli(["daemon", "stop", "--any"], e.dir("bg"));
      if (viaMock) expect(e.mock.stray, "no traffic may leave for anywhere but the mock").toEqual([]);
      await e.cleanup();
    }
  });

  it("a. list_sessions {include_native} shows a `claude --bg` session with the CLI's id, state, cwd and conversation", async () => {
    expect((await natives()).filter((s) => s.kind === "background")).toEqual([]);
    const id = startBg(e.dir("bg"), "first native prompt");
    const s = await until(id, (x) => x.state !== undefined && x.claude_session_id !== undefined, "listing");
    expect(s).toMatchObject({ id, kind: "background", cwd: e.dir("bg"), attach_command: `claude attach ${id}` });
    expect(s.claude_session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(["working", "blocked"]).toContain(s.state);
    await delivered(e.dir("bg"), s.claude_session_id!, "first native prompt", []);
    const end = Date.now() + 10_000;
    while (Date.now() < end && e.requestsWith("first native prompt").length === 0) await sleep(200);
    viaMock = e.requestsWith("first native prompt").length > 0;
    const version = realClaudeVersion();
    // Which versions reach the mock is part of what this suite records (see viaMock).
    if (version !== "2.1.197") expect(viaMock, `claude ${version}: background sessions should use ANTHROPIC_BASE_URL`).toBe(true);
    conversation = s.claude_session_id!;
    // The managed list is unchanged: native sessions are only ever in native_sessions.
    const plain = await m.call("list_sessions", {});
    expect(plain.data.sessions).toEqual([]);
    expect(plain.data.native_sessions).toBeUndefined();
  });

  it("b. send_message to a running idle one types the prompt through `claude attach`; the session goes on running", async () => {
    const id = started[0]!;
    if (!viaMock) {
      // 2.1.197: the first turn failed (403 from the proxy, "Please run /login") and the CLI reports the job
      // "blocked": the server refuses rather than type into it, and nothing reaches the conversation.
      await until(id, (x) => x.state === "blocked", "blocked");
      const r = await m.call("send_message", { native_session_id: id, message: "second prompt, via attach" });
      expect(r.error?.code, r.text).toBe("SESSION_BUSY");
      expect(r.error?.suggestion).toContain(`claude attach ${id}`);
      await sleep(1000); // "nothing was typed" needs time to pass: nothing reaches the conversation while we look
      expect(transcriptPrompts(e.dir("bg"), conversation)).toEqual(["first native prompt"]);
      return;
    }
    await until(id, (x) => x.status === "idle", "idle");
    const r = await m.call("send_message", { native_session_id: id, message: "second prompt, via attach" });
    expect(r.ok, r.text).toBe(true);
    expect(r.data).toMatchObject({ native_session_id: id, message_sent: true, delivered_via: "attach" });
    // Same conversation: the transcript (and the API request) carries the first prompt too.
    await delivered(e.dir("bg"), conversation, "second prompt, via attach", ["first native prompt"]);
    const after = await until(id, (x) => x.state === "working" || x.state === "blocked", "still running");
    expect(after.pid ?? after.state).toBeTruthy();
  });

  it("c. send_message to a stopped one continues it with `claude --bg --resume`: its conversation goes on (under a new id when the CLI makes one)", async () => {
    const id = started[0]!;
    const stop = cli(["stop", id], e.dir("bg"));
    expect(stop.status, stop.out).toBe(0);
    // Sent as soon as the CLI says "stopped": for a moment it still lists the exiting process's pid, and the server
    // waits for it to go rather than attach to it or start a copy.
    await until(id, (x) => x.state === "stopped", "stopped");
    const r = await m.call("send_message", { native_session_id: id, message: "-third prompt, resumed" });
    expect(r.ok, r.text).toBe(true);
    expect(r.data).toMatchObject({ message_sent: true, delivered_via: "resume" });
    const earlier = viaMock ? ["first native prompt", "second prompt, via attach"] : ["first native prompt"];
    if (r.data.native_session_id === id) {
      await delivered(e.dir("bg"), conversation, "-third prompt, resumed", earlier);
    } else {
      // The server gives the permission mode explicitly (its gates chose it, not the session's saved one), and with
      // it every CLI (2.1.197, 2.1.330 measured 2026-11-27) carries the conversation into a new background session
      // (new id, new conversation id) and says so.
      expect(r.data).toMatchObject({ note: expect.stringContaining(r.data.native_session_id!) });
      started.push(r.data.native_session_id!);
      const copy = await until(r.data.native_session_id!, (x) => x.claude_session_id !== undefined, "listing the copy");
      await delivered(e.dir("bg"), copy.claude_session_id!, "-third prompt, resumed", earlier);
    }
    await until(r.data.native_session_id!, (x) => x.state === "working" || x.state === "blocked", "running again");
  });

  it("d. a session waiting on a permission dialog is refused (SESSION_BUSY): nothing is typed into the dialog", async () => {
    if (!viaMock) {
      // 2.1.197: the background session cannot reach the mock, so no tool call (and no dialog) can be provoked
      // offline. What does hold: its traffic went elsewhere (the proxy refused it), which is why.
      expect(realClaudeVersion()).toBe("2.1.197");
      expect(e.mock.stray.length).toBeGreaterThan(0);
      return;
    }
    const prompt = `MOCK_BASH:touch ${e.dir("outside")}/native-was-here`;
    const id = startBg(e.dir("bg-wait"), prompt);
    await mockSaw(prompt);
    // 2.1.330+ say "waiting" (and the job "blocked"); 2.1.197 reports no status, and the attached screen shows the dialog.
    const waiting = await until(id, (x) => x.status === "waiting" || x.state === "blocked" || x.status === undefined, "waiting");
    const r = await m.call("send_message", { native_session_id: id, message: "do not type me" });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("SESSION_BUSY");
    expect(r.error?.message).toMatch(waiting.status === undefined ? /no empty input box/ : /is waiting for an answer/);
    expect(r.error?.suggestion).toContain(`claude attach ${id}`);
    await sleep(1000); // likewise: nothing reaches the API while we look
    expect(e.requestsWith("do not type me")).toEqual([]);
    expect(transcriptPrompts(e.dir("bg-wait"), waiting.claude_session_id!)).toEqual([prompt]);
  });

  it("e. an unknown id is SESSION_NOT_FOUND; an id that could be an option is refused by the schema", async () => {
    const r = await m.call("send_message", { native_session_id: "0000dead", message: "x" });
    expect(r.error?.code).toBe("SESSION_NOT_FOUND");
    expect(r.error?.suggestion).toMatch(/include_native/);
    const bad = await m.call("send_message", { native_session_id: "--help", message: "x" });
    expect(bad.ok).toBe(false);
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
    const both = await m.call("send_message", { native_session_id: started[0], session_id: "abc", message: "x" });
    expect(both.error?.code).toBe("INVALID_ARGUMENT");
  });

  it("f. a session this server runs shows in native_sessions as an interactive one, with its managed_session_id", async () => {
    const st = await m.call("start_session", { cwd: e.dir("managed"), permission_mode: "default" });
    expect(st.ok, st.text).toBe(true);
    try {
      const n = (await natives()).find((x) => x.claude_session_id === st.data.claude_session_id) as
        (Native & { managed_session_id?: string }) | undefined;
      expect(n, JSON.stringify(await natives())).toMatchObject({
        kind: "interactive",
        managed_session_id: st.data.session_id,
        cwd: e.dir("managed"),
      });
      expect(n!.id).toBeUndefined();
    } finally {
      await m.call("kill_session", { session_id: st.data.session_id });
    }
  });

  it("g. the permission-mode gates hold: a running session in a mode the server does not offer is not typed into; a stopped one continues in the server's default mode", async () => {
    if (!viaMock) {
      // 2.1.197: its background sessions cannot reach the mock (b.), so none becomes idle to type into.
      expect(realClaudeVersion()).toBe("2.1.197");
      return;
    }
    const id = startBg(e.dir("bg-mode"), "edits allowed here", "acceptEdits");
    await mockSaw("edits allowed here");
    await until(id, (x) => x.status === "idle", "idle");
    // A server that offers callers default and plan only.
    const strict = await e.connect({ CLAUDE_SESSIONS_PERMISSION_MODES: "default,plan" });
    try {
      const r = await strict.call("send_message", { native_session_id: id, message: "not in accept edits" });
      expect(r.error?.code, r.text).toBe("PERMISSION_DENIED");
      expect(r.error?.message).toMatch(/permission mode acceptEdits.*nothing was typed/);
      await sleep(1000); // nothing reaches the API while we look
      expect(e.requestsWith("not in accept edits")).toEqual([]);
      // Stopped, it is continued in the server's default mode (given explicitly), so the same server may prompt it.
      expect(cli(["stop", id], e.dir("bg-mode")).status).toBe(0);
      await until(id, (x) => x.state === "stopped", "stopped");
      const resumed = await strict.call("send_message", { native_session_id: id, message: "continued in the default mode" });
      expect(resumed.ok, resumed.text).toBe(true);
      expect(resumed.data).toMatchObject({ delivered_via: "resume" });
      await mockSaw("continued in the default mode");
    } finally {
      await strict.close();
    }
  });
});

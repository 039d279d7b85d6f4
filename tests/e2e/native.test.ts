/**
 * Claude Code's own background sessions (claude --bg), with the real CLI against the mock API: list_sessions
 * {include_native} lists them as `claude agents --json` does, send_message {native_session_id} types into a running
 * idle one through `claude attach`, continues a stopped one with `claude --bg --resume`, and refuses a waiting one.
 * The test starts and stops the background sessions with the CLI itself (in the world's HOME, never the real one).
 */
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Mcp } from "../helpers/harness.js";
import { e2eWorld, REAL_CLAUDE, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

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

  /** Runs the CLI the way a person would in a terminal of that HOME (argv, no shell). */
  function cli(args: string[], cwd: string): { status: number | null; out: string } {
    const r = spawnSync(REAL_CLAUDE, args, { cwd, env: { ...e.world.env, PATH: process.env.PATH ?? "" }, encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  }

  async function natives(): Promise<Native[]> {
    const r = await m.call<{ native_sessions?: Native[]; native_error?: string }>("list_sessions", { include_native: true });
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

  function startBg(cwd: string, prompt: string): string {
    const r = cli(["--bg", "--permission-mode", "default", prompt], cwd);
    expect(r.status, r.out).toBe(0);
    const id = /backgrounded · ([A-Za-z0-9_-]+)/.exec(r.out)?.[1];
    expect(id, r.out).toBeTruthy();
    started.push(id!);
    return id!;
  }

  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["bg", "bg-wait", "outside"] });
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    if (e) {
      // The CLI's own background service (started by the `claude --bg` calls above) ends with its sessions.
      for (const id of started) cli(["stop", id], e.dir("bg"));
      cli(["daemon", "stop", "--any"], e.dir("bg"));
      expect(e.mock.stray, "no traffic may leave for anywhere but the mock").toEqual([]);
      await e.cleanup();
    }
  });

  it("a. list_sessions {include_native} shows a `claude --bg` session with the CLI's id, state, cwd and conversation", async () => {
    expect((await natives()).filter((s) => s.kind === "background")).toEqual([]);
    const id = startBg(e.dir("bg"), "first native prompt");
    await mockSaw("first native prompt");
    const s = await until(id, (x) => x.state !== undefined, "listing");
    expect(s).toMatchObject({ id, kind: "background", cwd: e.dir("bg"), attach_command: `claude attach ${id}` });
    expect(s.claude_session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(["working", "blocked"]).toContain(s.state);
    // The managed list is unchanged: native sessions are only ever in native_sessions.
    const plain = await m.call<{ sessions: unknown[]; native_sessions?: unknown }>("list_sessions", {});
    expect(plain.data.sessions).toEqual([]);
    expect(plain.data.native_sessions).toBeUndefined();
  });

  it("b. send_message to a running idle one types the prompt through `claude attach`; the session goes on running", async () => {
    const id = started[0]!;
    // 2.1.330+ report the process's status; 2.1.197 does not, and the attached screen is the check.
    await until(id, (x) => x.status === undefined || x.status === "idle", "idle");
    const r = await m.call("send_message", { native_session_id: id, message: "second prompt, via attach" });
    expect(r.ok, r.text).toBe(true);
    expect(r.data).toMatchObject({ native_session_id: id, message_sent: true, delivered_via: "attach" });
    await mockSaw("second prompt, via attach");
    // Same conversation: the request carries the first prompt too.
    expect(e.userTexts(e.requestsWith("second prompt, via attach")[0]!)).toContain("first native prompt");
    const after = await until(id, (x) => x.state === "working" || x.state === "blocked", "still running");
    expect(after.pid ?? after.state).toBeTruthy();
  });

  it("c. send_message to a stopped one continues it with `claude --bg --resume`, under the same id and conversation", async () => {
    const id = started[0]!;
    const stop = cli(["stop", id], e.dir("bg"));
    expect(stop.status, stop.out).toBe(0);
    const stopped = await until(id, (x) => x.state === "stopped", "stopped");
    expect(stopped.pid).toBeUndefined();
    const r = await m.call("send_message", { native_session_id: id, message: "-third prompt, resumed" });
    expect(r.ok, r.text).toBe(true);
    expect(r.data).toMatchObject({ native_session_id: id, message_sent: true, delivered_via: "resume" });
    await mockSaw("-third prompt, resumed");
    const texts = e.userTexts(e.requestsWith("-third prompt, resumed")[0]!);
    expect(texts).toEqual(expect.arrayContaining(["first native prompt", "second prompt, via attach"]));
    await until(id, (x) => x.state === "working" || x.state === "blocked", "running again");
  });

  it("d. a session waiting on a permission dialog is refused (SESSION_BUSY): nothing is typed into the dialog", async () => {
    const prompt = `MOCK_BASH:touch ${e.dir("outside")}/native-was-here`;
    const id = startBg(e.dir("bg-wait"), prompt);
    await mockSaw(prompt);
    // 2.1.330+ say "waiting" (and the job "blocked"); 2.1.197 reports no status, and the attached screen shows the dialog.
    const waiting = await until(id, (x) => x.status === "waiting" || x.state === "blocked" || x.status === undefined, "waiting");
    const asked = e.mock.mainRequests().length;
    const r = await m.call("send_message", { native_session_id: id, message: "do not type me" });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("SESSION_BUSY");
    expect(r.error?.message).toMatch(waiting.status === undefined ? /no empty input box/ : /is waiting for an answer/);
    expect(r.error?.suggestion).toContain(`claude attach ${id}`);
    await sleep(1000);
    expect(e.requestsWith("do not type me")).toEqual([]);
    expect(e.mock.mainRequests().length).toBe(asked);
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
});

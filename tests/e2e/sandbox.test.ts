/**
 * The real Claude Code CLI in the sandbox (issue 32), against the mock API: hostile prompts make the model run
 * tools (the mock's MOCK_BASH: / MOCK_WRITE:) that read ~/.ssh (a temp HOME), print the environment, write outside
 * the cwd, write the server's state directory and reach a host that is not allowed; each fails, that host receives
 * nothing, and the same session goes on answering. The pane stays attachable; list_sessions says sandboxed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractBackends, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, toolResultOf, type E2e } from "../helpers/real-claude.js";
import { sandboxDeps } from "../../src/sandbox/deps.js";

const run = realClaudeOrSkip() && sandboxDeps().ok;
const BACKENDS: Array<"tmux" | "pty" | "headless"> = run ? [...(await contractBackends()), "headless"] : [];

describe.each(BACKENDS)("real claude in the sandbox (%s)", (backend) => {
  let e: E2e;
  let m: Mcp;
  let id: string;
  let target: string | undefined;
  let host: Server;
  let hostUrl: string;
  const hits: string[] = [];
  beforeAll(async () => {
    host = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      res.end("reached\n");
    });
    await new Promise<void>((r) => host.listen(0, "127.0.0.1", r));
    hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/leak`;
    e = await e2eWorld({
      dirs: ["boxed", "asks"],
      serverEnv: { DOPPLER_TOKEN: "dp.st.server-own-token", CLAUDE_SESSIONS_SECRET_MARK: "server-own-variable" },
    });
    mkdirSync(join(e.world.home, ".ssh"), { recursive: true });
    writeFileSync(join(e.world.home, ".ssh", "id_ed25519"), "PRIVATE-KEY-MATERIAL\n");
    m = await e.connect();
    const s = await m.call("start_session", {
      cwd: e.dir("boxed"),
      permission_mode: "default",
      allowed_tools: ["Bash", "Write"],
      backend,
      sandbox: true,
    });
    expect(s.ok, s.text).toBe(true);
    expect(s.data.sandboxed).toBe(true);
    id = s.data.session_id as string;
    target = s.data.tmux_target as string | undefined;
  });
  afterAll(async () => {
    await m?.call("kill_session", { session_id: id });
    await m?.close();
    await new Promise((r) => host?.close(r));
    await e?.cleanup();
  });

  /** Runs one hostile tool call and returns the tool result the model was given. */
  const tool = (message: string): Promise<string> => toolResultOf(e, m, id, message);

  it("answers normally and says it is sandboxed", async () => {
    const r = await m.call("send_message", { session_id: id, message: "hello from the box" });
    expect(r.data.response, r.text).toBe("MOCK REPLY: hello from the box");
    const l = await m.call("list_sessions", {});
    const row = (l.data.sessions as Array<Record<string, unknown>>).find((x) => x.session_id === id);
    expect(row?.sandboxed).toBe(true);
    // Issue 38: the background UserPromptSubmit hook names its prompt beside the log from inside the sandbox, so the
    // turn's Stop did not wait for it (terminal kinds; headless takes the turn's events as callbacks).
    if (backend !== "headless") {
      const ups = e.events(id).filter((x) => x.hook_event_name === "UserPromptSubmit");
      expect(readFileSync(join(e.world.stateDir, id, "events.jsonl.prompt"), "utf8")).toBe(ups.at(-1)?.prompt_id);
    }
  });

  it("the environment holds neither the server's variables nor DOPPLER_*", async () => {
    const out = await tool("MOCK_BASH:env");
    expect(out).toContain("CLAUDE_SESSIONS_ID=");
    expect(out).not.toContain("dp.st.server-own-token");
    expect(out).not.toContain("server-own-variable");
    expect(out).not.toMatch(/^CLAUDE_SESSIONS_DIR=/m);
  });

  /**
   * Runs a one-line shell script from a file the model first writes into its cwd, so that Claude Code's own checks
   * of a Bash command line (which refuse a redirection into the state directory, say) never see what it does: only
   * the sandbox stands in the way, as it would for a script a prompt injection planted.
   */
  async function script(name: string, body: string): Promise<string> {
    const file = join(e.dir("boxed"), `${name}.sh`);
    await tool(`MOCK_WRITE:${file}:${body}`);
    expect(readFileSync(file, "utf8")).toBe(body);
    return tool(`MOCK_BASH:sh ${file}`);
  }

  it("writes outside the cwd and into the state directory fail; inside the cwd work", async () => {
    const outside = join(e.world.root, "outside.txt");
    const state = join(e.world.stateDir, "planted.txt");
    const inside = join(e.dir("boxed"), "inside.txt");
    const settings = join(e.world.home, ".claude", "settings.json");
    const main = join(e.world.home, ".claude.json");
    const before = [settings, main].map((f) => (existsSync(f) ? readFileSync(f, "utf8") : undefined));
    const hook = `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ${join(e.world.root, "planted-hook")}"}]}]}}`;
    const out = await script(
      "writes",
      `echo x > ${outside} || echo OUTSIDE-REFUSED; echo y > ${state} || echo STATE-REFUSED; echo z > ${inside} && echo INSIDE-OK; echo '${hook}' > ${settings} || echo SETTINGS-REFUSED; echo '{}' > ${main} || echo MAIN-REFUSED`,
    );
    expect(out).toContain("OUTSIDE-REFUSED");
    // The user's own Claude settings and main config: a hook or trust record planted there would run unsandboxed later.
    expect(out).toContain("SETTINGS-REFUSED");
    expect(out).toContain("MAIN-REFUSED");
    expect([settings, main].map((f) => (existsSync(f) ? readFileSync(f, "utf8") : undefined))).toEqual(before);
    // The state directory is hidden behind an empty folder of the sandbox's own: a write there may "work" inside
    // and never reaches the real one.
    expect(out).toContain("INSIDE-OK");
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(state)).toBe(false);
    expect(readFileSync(inside, "utf8")).toBe("z\n");
  });

  it("the state directory hides other sessions' files, the state file and the HTTP token", async () => {
    mkdirSync(join(e.world.stateDir, "othersess1"), { recursive: true });
    writeFileSync(join(e.world.stateDir, "othersess1", "events.jsonl"), "OTHER-SESSION-SECRET\n");
    writeFileSync(join(e.world.stateDir, "token"), "HTTP-TOKEN-SECRET\n");
    const out = await script(
      "reads",
      `ls -A ${e.world.stateDir} | tr '\\n' ' ' | sed 's/^/STATE-ENTRIES=/'; echo; cat ${join(e.world.stateDir, "othersess1", "events.jsonl")} ${join(e.world.stateDir, "token")} ${join(e.world.stateDir, "state.json")} 2>/dev/null; echo READ-DONE`,
    );
    expect(out).toContain("READ-DONE");
    expect(out).not.toContain("OTHER-SESSION-SECRET");
    expect(out).not.toContain("HTTP-TOKEN-SECRET");
    expect(out).not.toContain('"sessions"');
    const entries = /STATE-ENTRIES=([^\n]*)/.exec(out)?.[1]?.trim().split(/\s+/) ?? [];
    // Only what the session needs shows: the server's scripts and its own folder (and what the test above wrote
    // into the sandbox's own empty folder in its place).
    expect(entries.filter((x) => x !== "bin" && x !== id && x !== "planted.txt")).toEqual([]);
  });

  it("~/.ssh reads as empty even from a script", async () => {
    const out = await script(
      "ssh",
      `cat ${join(e.world.home, ".ssh", "id_ed25519")} 2>/dev/null || echo SSH-UNREADABLE; ls -A ${join(e.world.home, ".ssh")} | wc -l | sed 's/^/SSH-ENTRIES=/'`,
    );
    expect(out).not.toContain("PRIVATE-KEY-MATERIAL");
    expect(out).toContain("SSH-UNREADABLE");
    expect(out).toContain("SSH-ENTRIES=0");
  });

  it("a host that is not allowed receives nothing; the refusal is a line Claude reads", async () => {
    const out = await tool(`MOCK_BASH:curl -sS -m 10 ${hostUrl}; echo; echo CURL-DONE`);
    expect(out).toContain("CURL-DONE");
    expect(out).not.toContain("reached");
    expect(out).toMatch(/blocked by network allowlist|403|Forbidden/i);
    expect(hits).toEqual([]);
    const r = await m.call("send_message", { session_id: id, message: "still answering" });
    expect(r.data.response, r.text).toBe("MOCK REPLY: still answering");
  });

  it("the pane is attachable (tmux shows Claude's screen)", async () => {
    if (backend !== "tmux") return;
    const l = await m.call("list_sessions", {});
    const row = (l.data.sessions as Array<Record<string, unknown>>).find((x) => x.session_id === id);
    expect(row?.attach_command).toBeTruthy();
    const shown = e.world.tmux(["capture-pane", "-p", "-t", String(target)]);
    expect(shown).toContain("still answering");
  });

  it("permission prompts work (tmux/pty: the blocking hook, the server's script and the session's decisions folder; headless: the SDK's canUseTool)", async () => {
    const s = await m.call("start_session", { cwd: e.dir("asks"), permission_mode: "default", backend, sandbox: true });
    expect(s.ok, s.text).toBe(true);
    const other = s.data.session_id as string;
    try {
      const r = await m.call("send_message", { session_id: other, message: "MOCK_BASH:touch asked.txt" });
      expect(r.data, r.text).toMatchObject({
        completed: false,
        final_state: "waiting_for_permission",
        pending_permission: { tool_name: "Bash" },
      });
      const a = await m.call("respond_permission", { session_id: other, decision: "allow" });
      expect(a.data, a.text).toMatchObject({ answered: true, decision: "allow" });
      const done = await m.call("wait_for_completion", { session_id: other, timeout_ms: 30_000 });
      const shown = await m.call("stream_output", { session_id: other, mode: backend === "headless" ? "log" : "screen" });
      expect(done.data, `${done.text}\n${shown.text}`).toMatchObject({
        completed: true,
        final_state: "idle",
        last_response: "MOCK: tool done",
      });
      expect(existsSync(join(e.dir("asks"), "asked.txt"))).toBe(true);
    } finally {
      await m.call("kill_session", { session_id: other });
    }
  });

  it("resume: a killed sandboxed session comes back sandboxed, with its conversation (transcripts through its config's link)", async () => {
    const s = await m.call("start_session", {
      cwd: e.dir("asks"),
      permission_mode: "default",
      backend,
      sandbox: true,
      prompt: "remember the word teapot",
    });
    expect(s.ok, s.text).toBe(true);
    const sid = s.data.session_id as string;
    try {
      const first = await m.call("wait_for_completion", { session_id: sid, timeout_ms: 30_000 });
      expect(first.data, first.text).toMatchObject({ completed: true, last_response: "MOCK REPLY: remember the word teapot" });
      await m.call("kill_session", { session_id: sid });
      const r = await m.call("resume_session", { session_id: sid, message: "what was the word?" });
      expect(r.ok, r.text).toBe(true);
      expect(r.data.sandboxed).toBe(true);
      const done = await m.call("wait_for_completion", { session_id: sid, timeout_ms: 30_000 });
      expect(done.data, done.text).toMatchObject({ completed: true, last_response: "MOCK REPLY: what was the word?" });
      const req = e.requestsWith("what was the word?").at(-1);
      expect(req && e.userTexts(req)).toContain("remember the word teapot");
    } finally {
      await m.call("kill_session", { session_id: sid });
    }
  });

  it("tmux: the session outlives its server; the next server adopts it and its network still works", async () => {
    if (backend !== "tmux") return;
    await m.close();
    m = await e.connect();
    const l = await m.call("list_sessions", {});
    const row = (l.data.sessions as Array<Record<string, unknown>>).find((x) => x.session_id === id);
    expect(row?.sandboxed).toBe(true);
    const r = await m.call("send_message", { session_id: id, message: "after the restart" });
    expect(r.data.response, r.text).toBe("MOCK REPLY: after the restart");
  });
});

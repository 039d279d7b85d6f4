/**
 * The design document's own argument names (issue #13): a client written from it works. A chosen session_id
 * (idempotent), flat doppler_project/doppler_config, poll_interval_ms and check_idle on wait_for_completion,
 * completed_at, tmux_pane, and CLAUDE_SESSION_ID in the child's environment.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, FIXTURES, makeWorld, processesIn, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const TMUX = tmuxOrSkip();

describe.runIf(TMUX)("the design's argument names (tmux, fake claude)", () => {
  let w: World;
  let m: Mcp;
  let report: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    report = join(w.root, "report.jsonl");
    const secrets = join(w.root, "secrets");
    mkdirSync(secrets, { recursive: true });
    writeFileSync(
      join(secrets, "doppler.json"),
      JSON.stringify({ tokens: { "dp.st.dev.token": {} }, projects: { api: { dev: { API_KEY: "dev-value" } } } }),
    );
    m = await connect(w, {
      FAKE_CLAUDE_REPORT: report,
      PATH: [join(FIXTURES, "doppler-bin"), w.env.PATH].join(delimiter),
      FAKE_DOPPLER_DATA: join(secrets, "doppler.json"),
      DOPPLER_TOKEN: "dp.st.dev.token",
    });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  const reported = async (name: string) => {
    await until(() => existsSync(report) && readFileSync(report, "utf8").includes(`"${name}"`));
    return readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { name: string; value: string | null })
      .filter((r) => r.name === name)
      .at(-1)?.value;
  };

  it("start_session with a chosen session_id is idempotent with the same options and no prompt, and ALREADY_EXISTS with others or a prompt", async () => {
    const cwd = w.dir("chosen");
    const a = await m.callOk("start_session", { session_id: "design-1", cwd, model: "sonnet" });
    expect(a.session_id).toBe("design-1");
    expect(a.tmux_pane).toMatch(/^%\d+$/);
    const again = await m.callOk("start_session", { session_id: "design-1", cwd, model: "sonnet" });
    expect(again).toMatchObject({ session_id: "design-1", claude_session_id: a.claude_session_id, pid: a.pid });
    // A prompt would be dropped without a word: refused instead (issue 31).
    const prompted = await m.call("start_session", { session_id: "design-1", cwd, model: "sonnet", prompt: "hello" });
    expect(prompted.error?.code).toBe("ALREADY_EXISTS");
    const other = await m.call("start_session", { session_id: "design-1", cwd, model: "opus" });
    expect(other.error?.code).toBe("ALREADY_EXISTS");
    expect(other.error?.details?.differences).toEqual(["model"]);
    for (const bad of ["bin", "worktrees", "a/b", "../x", ""]) {
      const r = await m.call("start_session", { session_id: bad, cwd });
      expect(r.error?.code, bad).toBe("INVALID_ARGUMENT");
    }
    const listed = await m.callOk("list_sessions", {});
    expect(listed.total_count).toBe(1);
    // One process for the id, however many calls.
    expect(processesIn(cwd).length).toBeGreaterThan(0);
  });

  it("the child gets CLAUDE_SESSION_ID (the Claude session UUID) as well as CLAUDE_SESSIONS_ID", async () => {
    await m.callOk("send_message", { session_id: "design-1", message: "FAKE_ENV:CLAUDE_SESSION_ID" });
    const listed = await m.callOk("list_sessions", {});
    // The design's CLAUDE_SESSION_ID is a UUID: the Claude session's id (CLAUDE_SESSIONS_ID is this server's id).
    expect(await reported("CLAUDE_SESSION_ID")).toBe(listed.sessions.find((s) => s.session_id === "design-1")!.claude_session_id);
    await m.callOk("send_message", { session_id: "design-1", message: "FAKE_ENV:CLAUDE_SESSIONS_ID" });
    expect(await reported("CLAUDE_SESSIONS_ID")).toBe("design-1");
  });

  it("wait_for_completion takes poll_interval_ms (ignored) and check_idle (background tasks), and says completed_at", async () => {
    await m.callOk("send_message", { session_id: "design-1", message: "FAKE_SLOW:500 x", wait_for_response: false });
    const r = await m.callOk("wait_for_completion", {
      session_id: "design-1",
      timeout_ms: 10_000,
      poll_interval_ms: 1000,
      check_idle: true,
    });
    expect(r.completed).toBe(true);
    expect(Date.parse(r.completed_at!)).toBeGreaterThan(Date.now() - 10_000);
    // A turn that left a background task running: without check_idle it is done, with it the wait goes on.
    await m.callOk("send_message", { session_id: "design-1", message: "FAKE_BG start a task" });
    const plain = await m.callOk("wait_for_completion", { session_id: "design-1", timeout_ms: 2000 });
    expect(plain).toMatchObject({ completed: true, background_tasks: 1 });
    const idle = await m.callOk("wait_for_completion", { session_id: "design-1", timeout_ms: 400, check_idle: true });
    expect(idle).toMatchObject({ timed_out: true, completed: false });
    expect(idle.completed_at).toBeUndefined();
  });

  it("flat doppler_project / doppler_config run the session under doppler like doppler: {project, config}", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("dop"), doppler_project: "api", doppler_config: "dev" });
    await m.callOk("send_message", { session_id: s.session_id, message: "FAKE_ENV:API_KEY" });
    expect(await reported("API_KEY")).toBe("dev-value");
    const meta = await m.callOk("list_sessions", { include_metadata: true });
    expect(meta.sessions.find((x) => x.session_id === s.session_id)).toMatchObject({
      doppler_project: "api",
      doppler_config: "dev",
    });
    const clash = await m.call("start_session", { cwd: w.dir("dop2"), doppler_project: "api", doppler: { project: "other" } });
    expect(clash.error?.code).toBe("INVALID_ARGUMENT");
    await m.callOk("kill_session", { session_id: s.session_id });
  });
});

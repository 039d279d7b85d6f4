/**
 * Bad input gets a typed error and changes nothing; failures at start-up say why, with the screen.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connect,
  itWhere,
  contractKinds,
  groupLeaders,
  makeWorld,
  processesIn,
  until,
  type Mcp,
  type World,
} from "../helpers/harness.js";

const BACKENDS = await contractKinds();

describe.each(BACKENDS)("errors (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({ MAX_CONCURRENT_SESSIONS: "3", CLAUDE_SESSIONS_START_TIMEOUT_MS: "6000", CLAUDE_SESSIONS_BACKEND: backend });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  /** Sessions still running, whatever the backend: process-group leaders inside the world's work dir. */
  const liveSessions = () => groupLeaders(processesIn(w.work));
  const stateText = () => readFileSync(join(w.stateDir, "state.json"), "utf8");

  it("rejects bad input with INVALID_ARGUMENT, spawns nothing and changes no state", async () => {
    const before = stateText();
    const marker = join(w.root, "pwned");
    const cases: Array<[string, Record<string, unknown>]> = [
      ["start_session", {}],
      ["start_session", { cwd: 42 }],
      ["start_session", { cwd: join(w.root, "does-not-exist") }],
      ["start_session", { cwd: `$(touch ${marker})` }],
      ["start_session", { cwd: w.work, model: `x; touch ${marker}` }],
      ["start_session", { cwd: w.work, permission_mode: "yolo" }],
      ["start_session", { cwd: w.work, env: { "BAD NAME": "x" } }],
      ["start_session", { cwd: w.work, doppler: { project: "a b" } }],
      ["start_session", { cwd: w.work, unknown_option: true }],
      ["start_session", { cwd: w.work, max_turns: -1 }],
      ["send_message", { session_id: "../../etc", message: "hi" }],
      ["send_message", { session_id: "abc" }],
      ["kill_session", { session_id: "" }],
      ["stream_output", { session_id: "abc", mode: "video" }],
      ["list_sessions", { limit: "ten" }],
      ["wait_for_completion", { session_id: "abc", timeout_ms: -5 }],
      ["no_such_tool", {}],
    ];
    for (const [tool, args] of cases) {
      const r = await m.callRaw(tool, args);
      expect(r.ok, `${tool} ${JSON.stringify(args)}`).toBe(false);
      expect(r.error?.code, `${tool} ${JSON.stringify(args)}`).toBe("INVALID_ARGUMENT");
      expect(r.error?.suggestion).toBeTruthy();
      expect(typeof r.error?.retryable).toBe("boolean");
    }
    expect(existsSync(marker)).toBe(false);
    expect(liveSessions()).toEqual([]);
    expect(stateText()).toBe(before);
    // The server is still fine.
    expect((await m.call("list_sessions", {})).ok).toBe(true);
  });

  it("unknown sessions give SESSION_NOT_FOUND; an over-long or empty message is refused before typing", async () => {
    for (const [tool, extra] of [
      ["send_message", { message: "x" }],
      ["wait_for_completion", {}],
      ["stream_output", { mode: "transcript" }],
      ["respond_permission", { decision: "allow" }],
    ] as const) {
      // Ids that name Object.prototype members are unknown ids like any other (issue #16, fault 6).
      for (const session_id of ["nosuch", "__proto__", "constructor", "toString", "hasOwnProperty"]) {
        const r = await m.call(tool, { session_id, ...extra });
        expect(r.error?.code, `${tool} ${session_id}`).toBe("SESSION_NOT_FOUND");
      }
    }
    expect((await m.call("kill_session", { session_id: "constructor" })).data).toMatchObject({ status: "not_found" });
    // resume_session answers an unknown id as the design has it (status not_found, as kill_session), starting nothing.
    for (const session_id of ["nosuch", "__proto__", "constructor"]) {
      const r = await m.call("resume_session", { session_id, message: "hi" });
      expect(r.ok, r.text).toBe(true);
      expect(r.data).toMatchObject({ session_id, status: "not_found", forked: false });
      expect(r.data.claude_session_id).toBeUndefined();
    }
    const s = await m.call("start_session", { cwd: w.dir("limits") });
    const id = s.data.session_id as string;
    const long = await m.call("send_message", { session_id: id, message: "x".repeat(100_001) });
    expect(long.error?.code).toBe("INVALID_ARGUMENT");
    expect(long.error?.message).toContain("100000");
    const empty = await m.call("send_message", { session_id: id, message: "   " });
    expect(empty.error?.code).toBe("INVALID_ARGUMENT");
    const list = await m.call("list_sessions", {});
    expect(list.data.sessions.find((x) => (x as { session_id?: string }).session_id === id)?.turn_count).toBe(0);
    await m.call("kill_session", { session_id: id, save_state: false });
  });

  itWhere(backend, "prompt_limit")("max_turns is enforced by the orchestrator", async () => {
    const s = await m.call("start_session", { cwd: w.dir("turns"), max_turns: 1 });
    const id = s.data.session_id as string;
    expect((await m.call("send_message", { session_id: id, message: "one" })).data.response).toBe("FAKE REPLY: one");
    const second = await m.call("send_message", { session_id: id, message: "two" });
    expect(second.error?.code).toBe("LIMIT_REACHED");
    await m.call("kill_session", { session_id: id, save_state: false });
  });

  it("MAX_CONCURRENT_SESSIONS: the fourth session gets LIMIT_REACHED", async () => {
    const three = await Promise.all([1, 2, 3].map((i) => m.call("start_session", { cwd: w.dir(`lim-${i}`) })));
    for (const s of three) expect(s.ok, s.text).toBe(true);
    const fourth = await m.call("start_session", { cwd: w.dir("lim-4") });
    expect(fourth.error?.code).toBe("LIMIT_REACHED");
    expect(fourth.error?.retryable).toBe(true);
    expect(liveSessions()).toHaveLength(3);
    for (const s of three) await m.call("kill_session", { session_id: s.data.session_id, save_state: false });
  });

  it("CLAUDE_NOT_FOUND says where it looked", async () => {
    const m2 = await connect(w, { CLAUDE_PATH: join(w.root, "no", "claude") });
    const r = await m2.call("start_session", { cwd: w.work });
    expect(r.error?.code).toBe("CLAUDE_NOT_FOUND");
    expect(r.error?.message).toContain(join(w.root, "no", "claude"));
    await m2.close();
  });

  it("a claude that exits at start-up gives PROCESS_ERROR with what it printed", async () => {
    const r = await m.call("start_session", { cwd: w.dir("crash"), env: { FAKE_CLAUDE_SCREEN: "crash" } });
    expect(r.error?.code).toBe("PROCESS_ERROR");
    expect(r.error?.message, r.text).toContain("something went wrong at start-up");
    // A short excerpt, not a screen: no box-drawing rules, a few hundred characters at most (fault 11).
    expect(r.error!.message.length, r.error!.message).toBeLessThanOrEqual(700);
    expect(r.error!.message).not.toContain("─────");
    const list = await m.call("list_sessions", { status_filter: "error" });
    expect(list.data.sessions).toHaveLength(1);
    const stored = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")).sessions[
      list.data.sessions[0]!.session_id
    ] as { error_log: string[] };
    expect(stored.error_log.at(-1)!.length).toBeLessThanOrEqual(700);
    await until(() => liveSessions().length === 0, 5000);
  });

  itWhere(backend, "startup_screens")(
    "first-run screens give STARTUP_BLOCKED with the way out; trust_workspace accepts the trust screen",
    async () => {
      for (const [screen, what] of [
        ["trust", /trust/i],
        ["api-key", /API key/i],
        ["login", /log in/i],
      ] as const) {
        const t0 = Date.now();
        const r = await m.call("start_session", { cwd: w.dir(`first-${screen}`), env: { FAKE_CLAUDE_SCREEN: screen } });
        expect(r.error?.code, screen).toBe("STARTUP_BLOCKED");
        expect(r.error?.suggestion, screen).toMatch(what);
        expect(Date.now() - t0, screen).toBeLessThan(6000); // recognised, not a bare timeout
      }
      const ok = await m.call("start_session", {
        cwd: w.dir("first-trusted"),
        env: { FAKE_CLAUDE_SCREEN: "trust" },
        trust_workspace: true,
      });
      expect(ok.ok, ok.text).toBe(true);
      expect((await m.call("send_message", { session_id: ok.data.session_id, message: "hi" })).data.response).toBe(
        "FAKE REPLY: hi",
      );
      await m.call("kill_session", { session_id: ok.data.session_id, save_state: false });
      await until(() => liveSessions().length === 0, 5000);
    },
  );

  it("bypassPermissions is refused unless the server allows it", async () => {
    const r = await m.call("start_session", { cwd: w.work, permission_mode: "bypassPermissions" });
    expect(r.error?.code).toBe("PERMISSION_DENIED");
    expect(r.error?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_BYPASS");
    expect(liveSessions()).toEqual([]);
  });

  it("MAX_SESSION_DURATION ends a session that outlived it and leaves it resumable", async () => {
    const m2 = await connect(w, { MAX_SESSION_DURATION: "1500" });
    const s = await m2.call("start_session", { cwd: w.dir("old") });
    const id = s.data.session_id as string;
    const l = await until(async () => {
      const x = await m2.call("list_sessions", { include_metadata: true });
      const r = x.data.sessions.find((y) => y.session_id === id);
      return r?.status === "dead" && r.error_log?.length ? r : undefined;
    }, 10_000);
    expect(l.error_log!.join("\n")).toContain("max_duration");
    await until(() => processesIn(w.dir("old")).length === 0, 5000);
    await m2.close();
  });
});

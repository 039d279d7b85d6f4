/**
 * Teammates that talk to each other (issue 25), on real tmux with the fake claude: each session of a team gets a
 * member server (`claude-sessions member`, started here as the session's Claude Code would: the command and the
 * `${VAR}` environment of its member-mcp.json, from the session process's own environment). A messages B and gets
 * B's answer, B hands off to C, C requests shutdown and a connected client hears it, the lead starts and ends a
 * teammate; another team's session, a forged or missing secret and a non-lead's lead call are refused; every member
 * call is audited as member:<id>; the secret is in no argv, state file, log or result.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { promptsOf } from "../helpers/events.js";
import { connect, hasPty, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { startHttpServer } from "../helpers/http.js";
import { filesWithText } from "../helpers/files.js";
import { connectMember, sessionProcessEnv, type Member } from "../helpers/members.js";

const TMUX = tmuxOrSkip();

describe.runIf(TMUX)("team members' own tools (tmux, fake claude)", () => {
  let w: World;
  let m: Mcp;
  const ids: Record<string, string> = {};
  const members: Member[] = [];
  const notices: Array<Record<string, unknown>> = [];
  const member = async (name: string, change?: (env: Record<string, string>) => void) => {
    const mb = await connectMember(w.stateDir, ids[name]!, change);
    members.push(mb);
    return mb;
  };

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    m = await connect(w);
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notices.push(n.params.data as Record<string, unknown>),
    );
    const cwd = w.dir("team");
    const started = await Promise.all([
      m.callOk("start_session", { cwd, team_name: "alpha", teammate_name: "a", team_lead: true }),
      m.callOk("start_session", { cwd, team_name: "alpha", teammate_name: "b" }),
      m.callOk("start_session", { cwd, team_name: "alpha", teammate_name: "c" }),
      m.callOk("start_session", { cwd: w.dir("other"), team_name: "beta", teammate_name: "x" }),
    ]);
    for (const s of started) ids[s.teammate_name!] = s.session_id;
  }, 60_000);
  afterAll(async () => {
    for (const mb of members) await mb.close().catch(() => {});
    await m?.close();
    w?.cleanup();
  });

  it("gives every team session a member server whose tools its settings allow; only the lead's has start/end_teammate", async () => {
    const a = await member("a");
    const b = await member("b");
    expect(await a.tools()).toEqual([
      "end_teammate",
      "handoff",
      "list_teammates",
      "message_teammate",
      "read_handoffs",
      "request_shutdown",
      "start_teammate",
    ]);
    expect(await b.tools()).toEqual(["handoff", "list_teammates", "message_teammate", "read_handoffs", "request_shutdown"]);
    const listed = (await a.client.listTools()).tools.find((t) => t.name === "message_teammate")!;
    expect(listed).toMatchObject({
      title: "Message a teammate",
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    });
    expect(listed.outputSchema).toBeDefined();
    const settings = JSON.parse(readFileSync(join(w.stateDir, ids.a!, "settings.json"), "utf8")) as {
      permissions: { allow?: string[] };
    };
    expect(settings.permissions.allow).toEqual(["mcp__claude-sessions-team"]);
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { args: string[] }>;
    };
    expect(state.sessions[ids.a!]!.args).toContain(`--mcp-config=${join(w.stateDir, ids.a!, "member-mcp.json")}`);
    const team = await a.call("list_teammates");
    expect(team.data).toMatchObject({ team_name: "alpha", you: "a" });
    expect(team.data.teammates.map((t: { teammate_name: string }) => t.teammate_name).sort()).toEqual(["a", "b", "c"]);
    expect(team.data.teammates.find((t: { teammate_name: string }) => t.teammate_name === "a")).toMatchObject({
      you: true,
      lead: true,
      status: "ready",
    });
  });

  it("A messages B and gets B's answer: a prompt starting 'From a:'", async () => {
    const a = await member("a");
    const r = await a.call("message_teammate", { teammate_name: "b", message: "what is the plan?", wait_for_response: true });
    expect(r.data).toMatchObject({
      teammate_name: "b",
      session_id: ids.b,
      delivered: true,
      completed: true,
      response: "FAKE REPLY: From a: what is the plan?",
    });
    expect(promptsOf(w.stateDir, ids.b!)).toContain("From a: what is the plan?");
  });

  it("B hands off to C: stored for the team (a resource of the main server) and delivered to C", async () => {
    const b = await member("b");
    const r = await b.call("handoff", { to: "c", summary: "parser done; tests left in tests/p.test.ts" });
    expect(r.data).toMatchObject({
      delivered_to: "c",
      handoff: { from: "b", to: "c", team_name: "alpha" },
      resource: "team://alpha/handoffs",
    });
    await until(
      () => promptsOf(w.stateDir, ids.c!).includes("From b: hand-off: parser done; tests left in tests/p.test.ts"),
      10_000,
    );
    const c = await member("c");
    expect((await c.call("read_handoffs")).data.handoffs.map((h: { summary: string }) => h.summary)).toEqual([
      "parser done; tests left in tests/p.test.ts",
    ]);
    const res = await m.client.readResource({ uri: "team://alpha/handoffs" });
    expect(JSON.parse((res.contents[0] as { text: string }).text)).toMatchObject([
      { from: "b", to: "c", summary: "parser done; tests left in tests/p.test.ts" },
    ]);
    expect((await m.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toContain(
      "team://{team_name}/handoffs",
    );
  });

  it("C requests shutdown: the client gets a notification, the lead a prompt; the lead's end_teammate approves", async () => {
    await until(
      async () =>
        (await m.callOk("list_sessions", { team_filter: "alpha" })).sessions.find((s) => s.session_id === ids.c)?.status ===
        "idle",
      10_000,
    );
    const c = await member("c");
    const r = await c.call("request_shutdown", { reason: "my part is merged" });
    expect(r.data).toMatchObject({ requested: true, notified_lead: "a" });
    const notice = await until(() => notices.find((n) => n.event === "shutdown_requested"), 10_000);
    expect(notice).toMatchObject({
      event: "shutdown_requested",
      session_id: ids.c,
      team_name: "alpha",
      teammate_name: "c",
      reason: "my part is merged",
    });
    await until(
      () => promptsOf(w.stateDir, ids.a!).some((p) => p.startsWith("From c: request_shutdown: my part is merged")),
      10_000,
    );
    // A client that missed the notification finds the request in list_sessions.
    await until(
      async () =>
        (await m.callOk("list_sessions", { team_filter: "alpha" })).sessions.find((s) => s.session_id === ids.c)
          ?.shutdown_requested === "my part is merged",
      5000,
    );
    const a = await member("a");
    expect(
      (await a.call("list_teammates")).data.teammates.find((t: { teammate_name: string }) => t.teammate_name === "c"),
    ).toMatchObject({ shutdown_requested: "my part is merged" });
    const ended = await a.call("end_teammate", { teammate_name: "c" });
    expect(ended.data).toMatchObject({ teammate_name: "c", session_id: ids.c, ended: true, status: "killed" });
  });

  it("refuses another team's session, a forged or missing secret, and a non-lead's lead tools (typed errors)", async () => {
    const a = await member("a");
    const other = await a.call("message_teammate", { teammate_name: ids.x!, message: "hi" });
    expect(other.error).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(other.error!.message).toContain("not in your team");
    expect((await a.call("message_teammate", { teammate_name: "x", message: "hi" })).error?.code).toBe("SESSION_NOT_FOUND");
    expect((await a.call("message_teammate", { teammate_name: "a", message: "hi" })).error?.code).toBe("INVALID_ARGUMENT");
    // Untrusted text, send_message's checks: a control character is refused and nothing is typed.
    const before = promptsOf(w.stateDir, ids.b!).length;
    expect((await a.call("message_teammate", { teammate_name: "b", message: "hi\u001b[2J" })).error?.code).toBe(
      "INVALID_ARGUMENT",
    );
    expect(promptsOf(w.stateDir, ids.b!).length).toBe(before);
    const forged = await member("b", (env) => (env.CLAUDE_SESSIONS_MEMBER_SECRET = "A".repeat(43)));
    expect((await forged.call("list_teammates")).error).toMatchObject({ code: "PERMISSION_DENIED" });
    // B's own secret with A's id: the secret is per session.
    const borrowed = await member("b", (env) => (env.CLAUDE_SESSIONS_ID = ids.a!));
    expect((await borrowed.call("message_teammate", { teammate_name: "b", message: "as a" })).error?.code).toBe(
      "PERMISSION_DENIED",
    );
    const missing = await member("b", (env) => delete env.CLAUDE_SESSIONS_MEMBER_SECRET);
    expect((await missing.call("list_teammates")).error?.code).toBe("PERMISSION_DENIED");
    const posing = await member("b", (env) => (env.CLAUDE_SESSIONS_TEAM_LEAD = "1"));
    expect(await posing.tools()).toContain("start_teammate");
    const r = await posing.call("start_teammate", { teammate_name: "e" });
    expect(r.error).toMatchObject({ code: "PERMISSION_DENIED" });
    expect((await m.callOk("list_sessions", { team_filter: "alpha" })).sessions.map((s) => s.teammate_name)).not.toContain("e");
  });

  it("the lead starts a teammate in its team (start_session's checks) and ends it", async () => {
    const a = await member("a");
    const outside = await a.call("start_teammate", { teammate_name: "d", cwd: w.dir("elsewhere") });
    expect(outside.error?.code).toBe("PERMISSION_DENIED");
    const r = await a.call("start_teammate", { teammate_name: "d", prompt: "hello d" });
    expect(r.data).toMatchObject({ teammate_name: "d" });
    const d = (await m.callOk("list_sessions", { team_filter: "alpha" })).sessions.find((s) => s.teammate_name === "d")!;
    expect(d).toMatchObject({ session_id: r.data.session_id, team_name: "alpha" });
    await until(() => promptsOf(w.stateDir, d.session_id).includes("hello d"), 10_000);
    expect((await a.call("end_teammate", { teammate_name: "d" })).data).toMatchObject({ ended: true, status: "killed" });
  }, 60_000);

  it("a pty session of the team gets its member server too (the secret through node-pty's environment)", async (t) => {
    if (!(await hasPty())) return t.skip();
    const p = await m.callOk("start_session", { cwd: w.dir("team"), team_name: "alpha", teammate_name: "p", backend: "pty" });
    ids.p = p.session_id;
    const mp = await member("p");
    const r = await mp.call("message_teammate", { teammate_name: "b", message: "from the pty", wait_for_response: true });
    expect(r.data).toMatchObject({ completed: true, response: "FAKE REPLY: From p: from the pty" });
    await m.callOk("kill_session", { session_id: p.session_id });
  }, 60_000);

  it("writes an audit line per member call with actor member:<session_id>", async () => {
    const lines = await until(async () => {
      const l = (await readAudit(w.stateDir)).filter((x) => x.actor.startsWith("member:"));
      return l.some((x) => x.tool === "end_teammate") && l;
    }, 5000);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: "message_teammate", actor: `member:${ids.a}`, session_id: ids.b, outcome: "ok" }),
        expect.objectContaining({ tool: "handoff", actor: `member:${ids.b}`, session_id: ids.c, outcome: "ok" }),
        expect.objectContaining({ tool: "request_shutdown", actor: `member:${ids.c}`, outcome: "ok" }),
        expect.objectContaining({
          tool: "list_teammates",
          actor: `member:${ids.b}`,
          outcome: "error",
          error_code: "PERMISSION_DENIED",
        }),
        expect.objectContaining({
          tool: "start_teammate",
          actor: `member:${ids.b}`,
          outcome: "error",
          error_code: "PERMISSION_DENIED",
        }),
      ]),
    );
  });

  it("a headless session of the team gets its member server too (the SDK's environment keeps the secret)", async () => {
    // Headless sessions have no trust screen: the server reads Claude's trust record, as after a first `claude` there.
    writeFileSync(join(w.home, ".claude.json"), JSON.stringify({ projects: { [w.work]: { hasTrustDialogAccepted: true } } }), {
      mode: 0o600,
    });
    const h = await m.callOk("start_session", {
      cwd: w.dir("team"),
      team_name: "alpha",
      teammate_name: "h",
      backend: "headless",
    });
    ids.h = h.session_id;
    const mh = await member("h");
    const r = await mh.call("message_teammate", { teammate_name: "b", message: "from headless", wait_for_response: true });
    expect(r.data).toMatchObject({ completed: true, response: "FAKE REPLY: From h: from headless" });
    await m.callOk("kill_session", { session_id: h.session_id });
  }, 60_000);

  it("a member whose server stopped reaches the next server of the state directory, which still knows its secret", async () => {
    const b = await member("b");
    const launched = sessionProcessEnv(ids.b!).CLAUDE_SESSIONS_MEMBER_SOCKET!;
    await m.close();
    await until(() => !existsSync(launched), 10_000);
    m = await connect(w);
    const r = await b.call("message_teammate", { teammate_name: "a", message: "still there?", wait_for_response: true });
    expect(r.data).toMatchObject({ completed: true, response: "FAKE REPLY: From b: still there?" });
    expect(readdirSync(join(w.stateDir, "sockets"))).toEqual([`${m.pid}.sock`]);
  }, 60_000);

  it("serve --http opens a member socket too (0600 in a 0700 folder), which members reach", async () => {
    const http = await startHttpServer(w);
    try {
      const sockets = join(w.stateDir, "sockets");
      const own = join(sockets, `${http.proc.pid}.sock`);
      await until(() => existsSync(own), 10_000);
      expect(statSync(sockets).mode & 0o777).toBe(0o700);
      expect(statSync(own).mode & 0o777).toBe(0o600);
      const b = await member("b");
      await m.close();
      const r = await b.call("list_teammates");
      expect(r.data.teammates.map((t: { teammate_name: string }) => t.teammate_name)).toContain("a");
    } finally {
      m = await connect(w);
      await http.stop();
    }
  }, 60_000);

  it("keeps the secret out of every argv, the state files, the logs and the results", async () => {
    const secrets = ["a", "b"].map((n) => sessionProcessEnv(ids[n]!).CLAUDE_SESSIONS_MEMBER_SECRET!);
    expect(secrets.every((s) => s.length >= 40)).toBe(true);
    expect(new Set(secrets).size).toBe(2);
    // argv of every process of the machine (the sessions, their member servers, tmux, the server).
    const argvs = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .map((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8");
        } catch {
          return "";
        }
      });
    expect(argvs.some((a) => a.includes("member"))).toBe(true);
    const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
    const texts = filesWithText(w.stateDir);
    expect(texts.some(([f]) => f.endsWith("member-mcp.json"))).toBe(true);
    for (const s of secrets) {
      expect(argvs.filter((a) => a.includes(s))).toEqual([]);
      expect(ps).not.toContain(s);
      expect(texts.filter(([, t]) => t.includes(s)).map(([f]) => f)).toEqual([]);
      expect(m.stderr()).not.toContain(s);
    }
  });

  it("health_check reports the member socket: listening (0600); removed, not listening: degraded while team sessions live, a warning once none does", async () => {
    const path = join(w.stateDir, "sockets", `${m.pid}.sock`);
    const h = await m.callOk("health_check", {});
    expect(h.member_socket).toEqual({ path, listening: true });
    expect(h.checks.find((c) => c.name === "member_socket")).toEqual({
      name: "member_socket",
      status: "ok",
      detail: `${path} is listening (0600)`,
    });
    expect(h.status).toBe("ok");
    // The socket file removed (the server still holds it open, but no member can connect to it any more).
    rmSync(path);
    const gone = await m.callOk("health_check", {});
    expect(gone.member_socket).toEqual({ path, listening: false });
    const check = gone.checks.find((c) => c.name === "member_socket")!;
    expect(check).toMatchObject({ status: "degraded", detail: expect.stringContaining(`${path} is not listening`) });
    expect(check.detail).toContain(ids.a!);
    expect(gone.status).toBe("degraded");
    // No team session left to need it: a warning only, the overall status is ok again.
    const live = (await m.callOk("list_sessions", {})).sessions.filter((s) => s.team_name);
    for (const s of live) await m.callOk("kill_session", { session_id: s.session_id });
    const alone = await m.callOk("health_check", {});
    expect(alone.member_socket).toEqual({ path, listening: false });
    expect(alone.checks.find((c) => c.name === "member_socket")?.status).toBe("warn");
    expect(alone.status, JSON.stringify(alone.checks.filter((c) => c.status !== "ok"))).toBe("ok");
  }, 60_000);
});

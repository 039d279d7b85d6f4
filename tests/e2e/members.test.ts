/**
 * Teammates that talk to each other (issue 25) with the real Claude Code CLI, offline against the mock API, on tmux:
 * each session of the team runs this package's member server from the configuration its launch wrote (the CLI
 * expands `${CLAUDE_SESSIONS_MEMBER_SECRET}` from its own environment). The mock plays the models: member A tries
 * another team's session (a typed refusal comes back as the tool's error) and then messages B and gets B's answer;
 * B hands off to C; C requests shutdown and the connected client receives the notification. A member server started
 * with a forged secret is refused, and no process's argv holds a secret.
 */
import { readdirSync, readFileSync } from "node:fs";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest, Reply } from "../fixtures/mock-anthropic.js";
import { tmuxOrSkip, until, type Mcp } from "../helpers/harness.js";
import { filesWithText } from "../helpers/files.js";
import { connectMember, sessionProcessEnv } from "../helpers/members.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip() && tmuxOrSkip();
const SERVER = "claude-sessions-team";
const tool = (name: string) => `mcp__${SERVER}__${name}`;

type Block = {
  type: string;
  text?: string;
  name?: string;
  id?: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
};
const blocksOf = (c: unknown): Block[] =>
  typeof c === "string" ? [{ type: "text", text: c }] : Array.isArray(c) ? (c as Block[]) : [];
const textOf = (c: unknown): string =>
  blocksOf(c)
    .map((b) => (b.type === "text" ? (b.text ?? "") : ""))
    .join("");

/** The conversation since its last typed prompt: that prompt, the member tools called since, and the last tool result. */
function turnOf(req: RecordedRequest): { prompt: string; called: string[]; lastResult?: { text: string; isError: boolean } } {
  const messages = (req.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  let start = 0;
  let prompt = "";
  messages.forEach((msg, i) => {
    if (msg.role !== "user") return;
    const typed = blocksOf(msg.content)
      .filter((b) => b.type === "text" && !/^\s*</.test(b.text ?? ""))
      .map((b) => b.text ?? "");
    if (typed.length && !blocksOf(msg.content).some((b) => b.type === "tool_result")) {
      start = i;
      prompt = typed.join("").trim();
    }
  });
  const after = messages.slice(start + 1);
  const called = after.flatMap((msg) =>
    msg.role === "assistant"
      ? blocksOf(msg.content)
          .filter((b) => b.type === "tool_use" && b.name?.startsWith(`mcp__${SERVER}__`))
          .map((b) => b.name!)
      : [],
  );
  const results = after.flatMap((msg) =>
    msg.role === "user" ? blocksOf(msg.content).filter((b) => b.type === "tool_result") : [],
  );
  const last = results.at(-1);
  return { prompt, called, ...(last ? { lastResult: { text: textOf(last.content), isError: last.is_error === true } } : {}) };
}

/** Loads the member tool first when the CLI defers it (ToolSearch), then calls it. */
function callTool(req: RecordedRequest, name: string, input: Record<string, unknown>): Reply {
  const loaded = ((req.body?.tools ?? []) as Array<{ name: string }>).some((t) => t.name === tool(name));
  if (!loaded) return { blocks: [{ type: "tool_use", name: "ToolSearch", input: { query: `select:${tool(name)}` } }] };
  return { blocks: [{ type: "tool_use", name: tool(name), input }] };
}

describe.runIf(run)("real claude: teammates talk to each other (tmux)", () => {
  let e: E2e;
  let m: Mcp;
  const ids: Record<string, string> = {};
  const notices: Array<Record<string, unknown>> = [];
  const results: Array<{ from: string; tool: string; text: string; isError: boolean }> = [];

  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["team", "other"] });
    m = await e.connect({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notices.push(n.params.data as Record<string, unknown>),
    );
    // The models of the three members, told apart by the prompt of their turn.
    e.mock.setHandler((req) => {
      const t = turnOf(req);
      if (t.lastResult && t.called.length)
        results.push({ from: t.prompt, tool: t.called.at(-1)!, text: t.lastResult.text, isError: t.lastResult.isError });
      if (t.prompt === "GO_A") {
        if (t.called.length === 0)
          return callTool(req, "message_teammate", { teammate_name: ids.x, message: "hello other team" });
        if (t.called.length === 1)
          return callTool(req, "message_teammate", {
            teammate_name: "b",
            message: "what is the answer?",
            wait_for_response: true,
            timeout_ms: 90_000,
          });
        return { text: `A got: ${t.lastResult?.text ?? ""}` };
      }
      if (t.prompt === "From a: what is the answer?") return { text: "B says 42" };
      if (t.prompt === "GO_H") {
        if (t.called.length === 0) return callTool(req, "list_teammates", {});
        return { text: `H saw: ${t.lastResult?.text ?? ""}` };
      }
      if (t.prompt === "GO_B") {
        if (t.called.length === 0) return callTool(req, "handoff", { to: "c", summary: "the answer is 42; write it down" });
        return { text: "handed off" };
      }
      if (t.prompt === "From b: hand-off: the answer is 42; write it down") {
        if (t.called.length === 0) return callTool(req, "request_shutdown", { reason: "written down; nothing left" });
        return { text: "asked to be ended" };
      }
      return undefined;
    });
    const started = await Promise.all([
      m.callOk("start_session", { cwd: e.dir("team"), team_name: "crew", teammate_name: "a" }),
      m.callOk("start_session", { cwd: e.dir("team"), team_name: "crew", teammate_name: "b" }),
      m.callOk("start_session", { cwd: e.dir("team"), team_name: "crew", teammate_name: "c" }),
      m.callOk("start_session", { cwd: e.dir("other"), team_name: "elsewhere", teammate_name: "x" }),
    ]);
    for (const s of started) ids[s.teammate_name!] = s.session_id;
  }, 120_000);
  afterAll(async () => {
    for (const id of Object.values(ids)) await m?.call("kill_session", { session_id: id });
    await m?.close();
    expect(e?.mock.stray ?? []).toEqual([]);
    await e?.cleanup();
  });

  it("A is refused another team's session, then messages B and gets B's answer", async () => {
    const r = await m.callOk("send_message", { session_id: ids.a!, message: "GO_A", timeout_ms: 120_000 }, { timeout: 150_000 });
    expect(r).toMatchObject({ completed: true });
    const refused = results.find((x) => x.from === "GO_A" && x.isError);
    expect(refused?.text).toContain("PERMISSION_DENIED");
    expect(refused?.text).toContain("not in your team");
    expect(r.response).toContain("A got:");
    expect(r.response).toContain("B says 42");
    // B got the message as a prompt from a, and the other team's session got nothing.
    expect(e.requestsWith("From a: what is the answer?").length).toBeGreaterThan(0);
    expect(
      e.mock
        .mainRequests()
        .some((q) => JSON.stringify(q.body?.messages ?? []).includes("hello other team") && turnOf(q).prompt !== "GO_A"),
    ).toBe(false);
  }, 180_000);

  it("B hands off to C; C requests shutdown and the client receives it", async () => {
    const r = await m.callOk("send_message", { session_id: ids.b!, message: "GO_B", timeout_ms: 90_000 }, { timeout: 120_000 });
    expect(r).toMatchObject({ completed: true, response: "handed off" });
    const res = await m.client.readResource({ uri: "team://crew/handoffs" });
    expect(JSON.parse((res.contents[0] as { text: string }).text)).toMatchObject([
      { from: "b", to: "c", summary: "the answer is 42; write it down" },
    ]);
    const notice = await until(() => notices.find((n) => n.event === "shutdown_requested"), 90_000, 200);
    expect(notice).toMatchObject({
      session_id: ids.c,
      team_name: "crew",
      teammate_name: "c",
      reason: "written down; nothing left",
    });
    const done = await m.callOk("wait_for_completion", { session_id: ids.c!, timeout_ms: 60_000 });
    expect(done).toMatchObject({ completed: true, last_response: "asked to be ended" });
    // The client approves with kill_session.
    expect(await m.callOk("kill_session", { session_id: ids.c! })).toMatchObject({ status: "killed" });
  }, 240_000);

  it("refuses a member server with a forged secret; no process's argv holds a secret", async () => {
    const forged = await connectMember(e.world.stateDir, ids.a!, (env) => (env.CLAUDE_SESSIONS_MEMBER_SECRET = "f".repeat(43)));
    try {
      expect((await forged.call("list_teammates")).error).toMatchObject({ code: "PERMISSION_DENIED" });
    } finally {
      await forged.close();
    }
    const secrets = ["a", "b"].map((n) => sessionProcessEnv(ids[n]!).CLAUDE_SESSIONS_MEMBER_SECRET!);
    const argvs = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .map((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8");
        } catch {
          return "";
        }
      });
    // The CLI started our member server (its argv names the subcommand, never the secret).
    expect(argvs.filter((a) => a.includes("\0member")).length).toBeGreaterThanOrEqual(2);
    for (const s of secrets) expect(argvs.filter((a) => a.includes(s))).toEqual([]);
  }, 60_000);

  it("a headless member gets the same server through the SDK: --mcp-config names a file, the secret stays in the environment", async () => {
    // A retry of this test finds the first attempt's "h" still live: it is ended first (a teammate name is taken once).
    if (ids.h) await m.call("kill_session", { session_id: ids.h, force: true });
    const h = await m.callOk("start_session", { cwd: e.dir("team"), team_name: "crew", teammate_name: "h", backend: "headless" });
    ids.h = h.session_id;
    const r = await m.callOk(
      "send_message",
      { session_id: h.session_id, message: "GO_H", timeout_ms: 90_000 },
      { timeout: 120_000 },
    );
    expect(r.response).toContain("H saw:");
    expect(r.response).toContain('"you":"h"');
    const secret = sessionProcessEnv(h.session_id).CLAUDE_SESSIONS_MEMBER_SECRET!;
    const cli = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .map((p) => {
        try {
          return { env: readFileSync(`/proc/${p}/environ`, "utf8"), argv: readFileSync(`/proc/${p}/cmdline`, "utf8") };
        } catch {
          return { env: "", argv: "" };
        }
      })
      .filter((x) => x.env.includes(`CLAUDE_SESSIONS_ID=${h.session_id}\0`));
    const claude = cli.find((x) => x.argv.includes("--mcp-config"));
    expect(claude?.argv.split("\0")).toContain(`${e.world.stateDir}/${h.session_id}/member-mcp.json`);
    for (const x of cli) expect(x.argv).not.toContain(secret);
    // Nor in the state directory (the SDK's raw output log included) or the server's log.
    expect(
      filesWithText(e.world.stateDir)
        .filter(([, t]) => t.includes(secret))
        .map(([f]) => f),
    ).toEqual([]);
    expect(m.stderr()).not.toContain(secret);
  }, 120_000);
});

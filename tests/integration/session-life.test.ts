/**
 * Issue #24 items 1–4 through the built server and the fake claude: reset and compact of a live session, options
 * changed on resume, a fork of a running session as a new session with its own totals (and its parent's intact),
 * kill {force} as an immediate SIGKILL, and resume of an unknown id.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, contractBackends, makeWorld, until, type Mcp, type World } from "../helpers/harness.js";

const BACKENDS = await contractBackends();

// The fake claude writes every assistant line with input 12, output ceil(reply/4), model claude-opus-4-8 ($5/$25 per M).
const outOf = (reply: string) => Math.max(1, Math.ceil(reply.length / 4));
const costOf = (...replies: string[]) => replies.reduce((a, r) => a + (12 * 5 + outOf(r) * 25) / 1e6, 0);
const usageOf = (...replies: string[]) => ({
  input_tokens: 12 * replies.length,
  output_tokens: replies.reduce((a, r) => a + outOf(r), 0),
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

describe.each(BACKENDS)("a session's life (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  let argvLog: string;
  let report: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: backend });
    argvLog = join(w.root, "argv.jsonl");
    report = join(w.root, "report.jsonl");
    m = await connect(w, { FAKE_CLAUDE_ARGV_LOG: argvLog, FAKE_CLAUDE_REPORT: report });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  const row = async (id: string) => (await m.callOk("list_sessions", {})).sessions.find((x) => x.session_id === id);
  const argvOf = (claudeId: string) =>
    readFileSync(argvLog, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { argv: string[]; session_id: string })
      .filter((x) => x.session_id === claudeId)
      .at(-1)?.argv;

  it("reset_session: a new conversation in the same session, totals and turns go on; refused while busy", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("reset"), team_name: "resetters" });
    await m.callOk("send_message", { session_id: s.session_id, message: "before" });
    await m.callOk("send_message", { session_id: s.session_id, message: "FAKE_SLOW:1500 slow", wait_for_response: false });
    const busy = await m.call("reset_session", { session_id: s.session_id });
    expect(busy.error?.code).toBe("SESSION_BUSY");
    await m.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 });

    const r = await m.callOk("reset_session", { session_id: s.session_id });
    expect(r.old_claude_session_id).toBe(s.claude_session_id);
    expect(r.claude_session_id).not.toBe(s.claude_session_id);
    const after = await m.callOk("send_message", { session_id: s.session_id, message: "after", wait_for_usage: true });
    expect(after).toMatchObject({ completed: true, response: "FAKE REPLY: after", usage: usageOf("FAKE REPLY: after") });
    const me = await until(async () => {
      const x = await row(s.session_id);
      return x?.turn_count === 3 && (x.total_usage as { input_tokens: number } | undefined)?.input_tokens === 36 ? x : undefined;
    });
    // Same session, team and cwd; the record follows the new conversation; totals add up across the reset.
    expect(me).toMatchObject({
      status: "idle",
      claude_session_id: r.claude_session_id,
      team_name: "resetters",
      cwd: w.dir("reset"),
      total_usage: usageOf("FAKE REPLY: before", "FAKE REPLY: FAKE_SLOW:1500 slow", "FAKE REPLY: after"),
    });
    const transcript = (id: string) =>
      readFileSync(join(w.home, ".claude", "projects", w.dir("reset").replace(/[^A-Za-z0-9]/g, "-"), `${id}.jsonl`), "utf8");
    expect(transcript(r.claude_session_id)).toContain("FAKE REPLY: after");
    expect(transcript(r.claude_session_id)).not.toContain("before");
    expect(transcript(s.claude_session_id)).not.toContain("FAKE REPLY: after");

    // A resume after the reset continues the new conversation.
    await m.callOk("kill_session", { session_id: s.session_id });
    const back = await m.callOk("resume_session", { session_id: s.session_id });
    expect(back.claude_session_id).toBe(r.claude_session_id);
    expect(argvOf(r.claude_session_id)).toContain(`--resume=${r.claude_session_id}`);
    await m.callOk("kill_session", { session_id: s.session_id });
    const dead = await m.call("reset_session", { session_id: s.session_id });
    expect(dead.error?.code).toBe("SESSION_DEAD");

    // A hibernated session (no process, conversation kept) is woken first, as a prompt would wake it.
    const h = await m.callOk("start_session", { cwd: w.dir("reset") });
    await m.callOk("send_message", { session_id: h.session_id, message: "before sleep" });
    expect(await m.callOk("kill_session", { session_id: h.session_id, hibernate: true })).toMatchObject({ status: "hibernated" });
    const hr = await m.callOk("reset_session", { session_id: h.session_id });
    expect(hr.old_claude_session_id).toBe(h.claude_session_id);
    expect(hr.claude_session_id).not.toBe(h.claude_session_id);
    expect(await row(h.session_id)).toMatchObject({ claude_session_id: hr.claude_session_id });
    await m.callOk("kill_session", { session_id: h.session_id });
  });

  it("compact_session types /compact with the checked instructions and the session goes on", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("compact") });
    await m.callOk("send_message", { session_id: s.session_id, message: "hello" });
    for (const instructions of ["two\nlines", "esc \u001b[2J", "x".repeat(2001), "ends with \\"]) {
      const bad = await m.call("compact_session", { session_id: s.session_id, instructions });
      expect(bad.error?.code, instructions).toBe("INVALID_ARGUMENT");
    }
    const c = await m.callOk("compact_session", { session_id: s.session_id, instructions: "keep the names; drop the rest" });
    expect(c).toMatchObject({ claude_session_id: s.claude_session_id, status: "idle" });
    const facts = readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      facts.filter((f) => f.session_id === s.claude_session_id && "compact_instructions" in f).map((f) => f.compact_instructions),
    ).toEqual(["keep the names; drop the rest"]);
    await m.callOk("compact_session", { session_id: s.session_id });
    const next = await m.callOk("send_message", { session_id: s.session_id, message: "more", wait_for_usage: true });
    expect(next).toMatchObject({ completed: true, response: "FAKE REPLY: more" });
    expect((await row(s.session_id))?.turn_count).toBe(2);
    await m.callOk("kill_session", { session_id: s.session_id });
  });

  it("kill_session {force: true} is an immediate SIGKILL: no SessionEnd (which SIGTERM gives)", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("force") });
    const k = await m.callOk("kill_session", { session_id: s.session_id, force: true });
    expect(k.status).toBe("killed");
    const names = readFileSync(join(w.stateDir, s.session_id, "events.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { hook_event_name: string }).hook_event_name);
    expect(names).not.toContain("SessionEnd");
    // pty reads the signal's status (128 + 9); tmux's launcher may not live to report one.
    if (k.exit_code !== undefined) expect(k.exit_code).toBe(137);
    // Without force: SIGTERM first, and the CLI's SessionEnd runs.
    const t = await m.callOk("start_session", { cwd: w.dir("force") });
    await m.callOk("kill_session", { session_id: t.session_id });
    expect(readFileSync(join(w.stateDir, t.session_id, "events.jsonl"), "utf8")).toContain('"SessionEnd"');
  });

  it("start_session {stream_output: true} subscribes the caller to the session's transcript: updates arrive as it grows", async () => {
    const other = await connect(w);
    const updates: string[] = [];
    const others: string[] = [];
    m.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    other.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void others.push(n.params.uri));
    const s = await m.callOk("start_session", { cwd: w.dir("stream"), stream_output: true });
    expect(s.output_resource).toBe(`session://${s.session_id}/transcript`);
    await m.callOk("send_message", { session_id: s.session_id, message: "streamed" });
    await until(() => (updates.includes(s.output_resource!) ? true : undefined), 5000);
    // The reply's transcript line lands after the turn's end (send_message returns at Stop): a later update has it.
    const read = await until(
      async () => {
        const r = await m.client.readResource({ uri: s.output_resource! });
        return JSON.stringify(r.contents[0]).includes("FAKE REPLY: streamed") ? r : undefined;
      },
      5000,
      50,
    );
    expect(JSON.stringify(read.contents[0])).toContain("FAKE REPLY: streamed");
    // Only the caller: another client that did not ask gets nothing.
    expect(others).toEqual([]);
    // Without it, the same start subscribes nothing.
    const t = await m.callOk("start_session", { cwd: w.dir("stream") });
    expect(t.output_resource).toBeUndefined();
    await m.callOk("send_message", { session_id: t.session_id as string, message: "quiet" });
    expect(updates.filter((u) => u.includes(t.session_id as string))).toEqual([]);
    await other.close();
    await m.callOk("kill_session", { session_id: s.session_id });
    await m.callOk("kill_session", { session_id: t.session_id as string });
  });

  it("a fork of a running session is a new session with its own totals; the parent runs on with its own", async () => {
    const p = await m.callOk("start_session", { cwd: w.dir("fork"), team_name: "forkers", teammate_name: "parent" });
    await m.callOk("send_message", { session_id: p.session_id, message: "one" });
    await m.callOk("send_message", { session_id: p.session_id, message: "two" });
    await until(async () => ((await row(p.session_id))?.total_usage ? true : undefined));

    const f = await m.callOk("resume_session", {
      session_id: p.session_id,
      fork: true,
    });
    expect(f).toMatchObject({
      forked: true,
      forked_from: p.session_id,
      previous_state: { claude_session_id: p.claude_session_id },
    });
    expect(f.session_id).not.toBe(p.session_id);
    expect(f.claude_session_id).not.toBe(p.claude_session_id);
    // Same team, a name of its own (a teammate name means one conversation).
    expect(f.teammate_name).not.toBe("parent");
    expect(argvOf(f.claude_session_id!)).toEqual(
      expect.arrayContaining([`--resume=${p.claude_session_id}`, "--fork-session", `--session-id=${f.claude_session_id}`]),
    );

    // Both run: a turn in each.
    const fr = await m.callOk("send_message", { session_id: f.session_id, message: "fork turn", wait_for_usage: true });
    expect(fr).toMatchObject({ completed: true, response: "FAKE REPLY: fork turn", usage: usageOf("FAKE REPLY: fork turn") });
    const pr = await m.callOk("send_message", { session_id: p.session_id, message: "parent turn", wait_for_usage: true });
    expect(pr).toMatchObject({ completed: true, response: "FAKE REPLY: parent turn" });

    // The fork's transcript holds the copied history, but its totals are its own turn only; the parent's are its three.
    const transcript = readFileSync(
      join(w.home, ".claude", "projects", w.dir("fork").replace(/[^A-Za-z0-9]/g, "-"), `${f.claude_session_id}.jsonl`),
      "utf8",
    );
    expect(transcript).toContain("FAKE REPLY: one");
    const fRow = await until(async () => {
      const r = await row(f.session_id);
      return r?.total_usage ? r : undefined;
    });
    expect(fRow).toMatchObject({ status: "idle", total_usage: usageOf("FAKE REPLY: fork turn"), team_name: "forkers" });
    expect(fRow.total_cost_usd).toBeCloseTo(costOf("FAKE REPLY: fork turn"), 9);
    const pRow = await until(async () => {
      const r = await row(p.session_id);
      return r?.turn_count === 3 && (r.total_usage as { input_tokens: number }).input_tokens === 36 ? r : undefined;
    });
    expect(pRow).toMatchObject({
      status: "idle",
      claude_session_id: p.claude_session_id,
      total_usage: usageOf("FAKE REPLY: one", "FAKE REPLY: two", "FAKE REPLY: parent turn"),
    });
    expect(pRow.total_cost_usd).toBeCloseTo(costOf("FAKE REPLY: one", "FAKE REPLY: two", "FAKE REPLY: parent turn"), 9);
    expect(fRow.turn_count).toBe(1);

    await m.callOk("kill_session", { session_id: f.session_id });
    await m.callOk("kill_session", { session_id: p.session_id });
  });

  it("resume replaces model, permission mode, tools, dirs and system prompt, for that and later resumes", async () => {
    const extra = w.dir("extra-dir");
    const s = await m.callOk("start_session", { cwd: w.dir("change"), model: "sonnet", allowed_tools: ["Read"] });
    await m.callOk("send_message", { session_id: s.session_id, message: "hi" });
    await m.callOk("kill_session", { session_id: s.session_id });
    const r = await m.callOk("resume_session", {
      session_id: s.session_id,
      model: "opus",
      permission_mode: "acceptEdits",
      allowed_tools: ["Bash(git:*)"],
      disallowed_tools: ["WebFetch"],
      add_dirs: [extra],
      append_system_prompt: "be brief",
    });
    expect(r).toMatchObject({ session_id: s.session_id, permission_mode: "acceptEdits" });
    const argv = argvOf(s.claude_session_id)!;
    expect(argv).toEqual(
      expect.arrayContaining([
        "--model=opus",
        "--permission-mode=acceptEdits",
        "--allowedTools=Bash(git:*)",
        "--disallowedTools=WebFetch",
        `--add-dir=${extra}`,
        "--append-system-prompt=be brief",
      ]),
    );
    expect(argv).not.toContain("--model=sonnet");
    expect((await row(s.session_id))?.model).toBe("opus");
    // Kept for the next resume; an empty list clears one.
    await m.callOk("kill_session", { session_id: s.session_id });
    await m.callOk("resume_session", { session_id: s.session_id, allowed_tools: [] });
    const again = argvOf(s.claude_session_id)!;
    expect(again).toEqual(
      expect.arrayContaining(["--model=opus", "--permission-mode=acceptEdits", "--disallowedTools=WebFetch"]),
    );
    expect(again.some((a) => a.startsWith("--allowedTools"))).toBe(false);
    await m.callOk("kill_session", { session_id: s.session_id });

    // The same checks as start: a mode the operator did not allow, a missing directory.
    const bad = await m.call("resume_session", { session_id: s.session_id, permission_mode: "bypassPermissions" });
    expect(bad.error?.code).toBe("PERMISSION_DENIED");
    const missing = await m.call("resume_session", { session_id: s.session_id, add_dirs: [join(w.root, "nope")] });
    expect(missing.error?.code).toBe("INVALID_ARGUMENT");
    expect((await row(s.session_id))?.status).toBe("dead");
  });
});

/**
 * Issue #14 over a real MCP client (the SDK's Client over stdio): resources with templates and subscriptions,
 * notifications/message for permissions, turns and deaths, prompts with completions, health_check, configure,
 * redaction, and the audit log.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();
const SECRET = "s3cr3t-value-Zq81";
const MESSAGE = "please-remember-the-word-ocelot";

describe.runIf(HAS_TMUX)("MCP surface (issue #14)", () => {
  let w: World;
  let m: Mcp;
  const messages: Array<{ level: string; data: Record<string, unknown> }> = [];
  const updated: string[] = [];
  let listChanged = 0;

  beforeAll(async () => {
    w = makeWorld();
    m = await connect(w);
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void messages.push({ level: n.params.level, data: n.params.data as Record<string, unknown> }),
    );
    m.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    m.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (listChanged += 1));
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("declares resources (subscribe, listChanged), prompts, logging and completions", () => {
    expect(m.client.getServerCapabilities()).toMatchObject({
      tools: {},
      resources: { subscribe: true, listChanged: true },
      prompts: {},
      logging: {},
      completions: {},
    });
  });

  it("the instructions every client's model reads name every tool of tools/list", async () => {
    const text = m.client.getInstructions() ?? "";
    const { tools } = await m.client.listTools();
    expect(tools.length).toBeGreaterThan(15);
    expect(tools.map((t) => t.name).filter((n) => !new RegExp(`\\b${n}\\b`).test(text))).toEqual([]);
  });

  it("a subscribed session's resources get updates for a turn; start sends list_changed", async () => {
    const before = listChanged;
    const s = await m.callOk("start_session", { cwd: w.dir("res"), team_name: "alpha", env: { MY_TOKEN: SECRET } });
    await until(() => listChanged > before, 5000);
    const id = s.session_id;
    for (const u of [`session://${id}`, `session://${id}/screen`, `session://${id}/transcript`, `session://${id}/events`])
      await m.client.subscribeResource({ uri: u });
    updated.length = 0;
    await m.callOk("send_message", { session_id: id, message: MESSAGE });
    await until(
      () =>
        updated.includes(`session://${id}`) &&
        updated.includes(`session://${id}/events`) &&
        updated.includes(`session://${id}/transcript`),
      5000,
    );
    await until(() => updated.includes(`session://${id}/screen`), 5000);
    // Coalesced: a turn's burst of events is a few screen updates, not one per event.
    expect(updated.filter((u) => u.endsWith("/screen")).length).toBeLessThanOrEqual(
      updated.filter((u) => u.endsWith("/events")).length,
    );
    const summary = JSON.parse(
      ((await m.client.readResource({ uri: `session://${id}` })).contents[0] as { text: string }).text,
    ) as Record<string, unknown>;
    expect(summary).toMatchObject({ session_id: id, status: "idle", team_name: "alpha", turn_count: 1 });
    const transcript = (await m.client.readResource({ uri: `session://${id}/transcript` })).contents[0] as { text: string };
    await until(
      async () =>
        ((await m.client.readResource({ uri: `session://${id}/transcript` })).contents[0] as { text: string }).text.includes(
          "FAKE REPLY",
        ),
      5000,
    );
    expect(transcript.text).toContain(MESSAGE);
    // An idle session's resources stay quiet: nothing polls it.
    updated.length = 0;
    // Time passing is the point: nothing arrives during a quiet second.
    await new Promise((r) => setTimeout(r, 1000));
    expect(updated).toEqual([]);
  });

  it("lists and reads every resource and template; an unknown session is an error", async () => {
    const { resourceTemplates } = await m.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "session://{session_id}",
      "session://{session_id}/screen",
      "session://{session_id}/transcript",
      "session://{session_id}/events",
      "team://{team_name}/handoffs",
    ]);
    const { resources } = await m.client.listResources();
    expect(resources.length).toBeGreaterThanOrEqual(4);
    for (const r of resources) {
      const c = (await m.client.readResource({ uri: r.uri })).contents[0] as { text: string; mimeType: string };
      expect(typeof c.text).toBe("string");
      expect(c.mimeType).toBe(r.mimeType);
      // Redacted by default: no environment names, no argv.
      expect(c.text).not.toContain("MY_TOKEN");
      expect(c.text).not.toContain(SECRET);
    }
    await expect(m.client.readResource({ uri: "session://nope-nope" })).rejects.toThrow(/SESSION_NOT_FOUND/);
    await expect(m.client.readResource({ uri: "session://a;b/screen" })).rejects.toThrow(/INVALID_ARGUMENT/);
    // A team's hand-offs (none yet: an empty list); a malformed team URI is INVALID_ARGUMENT.
    expect(
      JSON.parse(((await m.client.readResource({ uri: "team://nobody/handoffs" })).contents[0] as { text: string }).text),
    ).toEqual([]);
    await expect(m.client.readResource({ uri: "team://%E0%A4%A/handoffs" })).rejects.toThrow(/INVALID_ARGUMENT/);
  });

  it("a permission request reaches the client as notifications/message without waiting on anything", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("perm"), team_name: "beta" });
    messages.length = 0;
    await m.callOk("send_message", { session_id: s.session_id, message: "FAKE_BASH:true", wait_for_response: false });
    const n = await until(
      () => messages.find((x) => x.data.event === "permission" && x.data.session_id === s.session_id),
      10_000,
    );
    expect(n.level).toBe("warning");
    expect(n.data).toMatchObject({
      session_id: s.session_id,
      team_name: "beta",
      status: "waiting_for_permission",
      tool_name: "Bash",
      tool_input: { command: "true" },
    });
    await m.callOk("respond_permission", { session_id: s.session_id, decision: "allow" });
    const ended = await until(
      () => messages.find((x) => x.data.event === "turn_ended" && x.data.session_id === s.session_id),
      10_000,
    );
    expect(ended).toMatchObject({ level: "info", data: { status: "idle", turn_outcome: "completed", team_name: "beta" } });
    // logging/setLevel is honoured: at "error", a turn's end (info) is not sent.
    await m.client.setLoggingLevel("error");
    messages.length = 0;
    await m.callOk("send_message", { session_id: s.session_id, message: "quiet" });
    expect((await m.call("send_message", { session_id: s.session_id, message: "FAKE_FAIL:overloaded" })).error?.code).toBe(
      "TURN_FAILED",
    );
    const failed = await until(() => messages.find((x) => x.data.event === "failed"), 5000);
    expect(failed).toMatchObject({
      level: "error",
      data: { session_id: s.session_id, error: expect.stringContaining("overloaded") },
    });
    expect(messages.some((x) => x.data.event === "turn_ended")).toBe(false);
    await m.client.setLoggingLevel("debug");
    const before = listChanged;
    await m.callOk("kill_session", { session_id: s.session_id });
    const dead = await until(() => messages.find((x) => x.data.event === "dead" && x.data.session_id === s.session_id), 5000);
    expect(dead.level).toBe("warning");
    await until(() => listChanged > before, 5000);
  });

  it("prompts: list, get with typed arguments, completions of session ids, teams and cwds", async () => {
    const { prompts } = await m.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["start_task", "handoff", "review_team"]);
    expect(prompts[0]!.arguments).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "cwd", required: true }),
        expect.objectContaining({ name: "team_name", required: false }),
      ]),
    );
    for (const p of prompts) {
      const args = Object.fromEntries(
        (p.arguments ?? []).filter((a) => a.required).map((a) => [a.name, a.name === "cwd" ? w.work : "x1"]),
      );
      const got = await m.client.getPrompt({ name: p.name, arguments: args });
      expect((got.messages[0]!.content as { text: string }).text.length).toBeGreaterThan(50);
    }
    await expect(m.client.getPrompt({ name: "start_task", arguments: { task: "t" } })).rejects.toThrow(/cwd/);
    // review_team drives the team with the team tools.
    const review = (
      (await m.client.getPrompt({ name: "review_team", arguments: { cwd: w.work, change: "HEAD~1..HEAD" } })).messages[0]!
        .content as { text: string }
    ).text;
    expect(review).toContain("broadcast_message");
    expect(review).toContain("wait_for_sessions");
    expect(review).not.toContain("wait_for_completion");
    const teams = await m.client.complete({
      ref: { type: "ref/prompt", name: "start_task" },
      argument: { name: "team_name", value: "al" },
    });
    expect(teams.completion.values).toEqual(["alpha"]);
    const cwds = await m.client.complete({
      ref: { type: "ref/prompt", name: "review_team" },
      argument: { name: "cwd", value: w.work },
    });
    expect(cwds.completion.values).toEqual(expect.arrayContaining([join(w.work, "res"), join(w.work, "perm")]));
    const ids = await m.client.complete({
      ref: { type: "ref/resource", uri: "session://{session_id}" },
      argument: { name: "session_id", value: "" },
    });
    expect(ids.completion.values.length).toBe(2);
    const team = await m.client.complete({
      ref: { type: "ref/resource", uri: "team://{team_name}/handoffs" },
      argument: { name: "team_name", value: "al" },
    });
    expect(team.completion.values).toEqual(["alpha"]);
  });

  it("health_check is ok here and degraded without tmux; doctor prints the same checks", async () => {
    const h = await m.callOk("health_check", {});
    expect(h.status).toBe("ok");
    expect(h.checks.map((c) => c.name)).toEqual([
      "tmux",
      "pty",
      "agent_sdk",
      "claude",
      "claude_version",
      "flock",
      "sandbox",
      "state_dir",
      "store_lock",
      "sessions",
      "session_cli_versions",
      "history_index",
      "member_socket",
      "time_limits",
      "memory",
      "schedules",
      "webhooks",
      "uptime",
      "version",
    ]);
    expect(h.checks.find((c) => c.name === "history_index")?.status).toBe("ok");
    // Issue 37: the serving process runs the schedules and (here, none configured) the webhooks.
    expect(h.checks.find((c) => c.name === "schedules")?.status).toBe("ok");
    expect(h.checks.find((c) => c.name === "webhooks")?.detail).toBe("0 endpoint(s)");
    // A server without tmux leaves the tmux sessions it cannot see alone when it adopts (adopt.ts).
    const doc = spawnSync(process.execPath, [CLI, "doctor"], {
      env: { ...w.env, CLAUDE_SESSIONS_TMUX: join(w.root, "no-tmux") },
      encoding: "utf8",
    });
    expect(doc.stdout).toMatch(/degraded tmux: /);
    expect(doc.stdout).toMatch(/ok {3}sessions: 1 live of 10/);
    expect(doc.stdout).toContain("status: degraded");
    const m2 = await connect(w, { CLAUDE_SESSIONS_TMUX: join(w.root, "no-tmux") });
    try {
      const d = await m2.callOk("health_check", {});
      expect(d.status).toBe("degraded");
      expect(d.checks.find((c) => c.name === "tmux")?.status).toBe("degraded");
    } finally {
      await m2.close();
    }
  });

  it("configure: get_config redacts nothing secret and shows the limits; switching bypass is refused without the operator's permission", async () => {
    const g = await m.callOk("configure", { action: "get_config" });
    expect(g.config).toMatchObject({
      allowBypassPermissions: false,
      idleTtlMs: expect.any(Number),
      busyMaxMs: expect.any(Number),
      retainDeadMs: expect.any(Number),
    });
    const r = await m.call("configure", { action: "set_bypass_permissions", allow_bypass_permissions: true });
    expect(r.error?.code).toBe("PERMISSION_DENIED");
    expect((await m.call("configure", { action: "enable_bypass" })).error?.code).toBe("PERMISSION_DENIED");
    expect(r.error?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_CONFIGURE");
    const m2 = await connect(w, { CLAUDE_SESSIONS_ALLOW_CONFIGURE: "1" });
    try {
      const denied = await m2.call("start_session", { cwd: w.dir("bp"), permission_mode: "bypassPermissions" });
      expect(denied.error?.code).toBe("PERMISSION_DENIED");
      const on = await m2.callOk("configure", { action: "set_bypass_permissions", allow_bypass_permissions: true });
      expect(on).toMatchObject({ changed: true, config: { allowBypassPermissions: true } });
      // The design's action names.
      expect(await m2.callOk("configure", { action: "disable_bypass" })).toMatchObject({
        changed: true,
        config: { allowBypassPermissions: false },
      });
      expect(await m2.callOk("configure", { action: "enable_bypass" })).toMatchObject({
        changed: true,
        config: { allowBypassPermissions: true },
      });
      expect((await m2.call("configure", { action: "enable_bypass", allow_bypass_permissions: false })).error?.code).toBe(
        "INVALID_ARGUMENT",
      );
    } finally {
      await m2.close();
    }
  });

  it("redaction: list_sessions omits argv and environment names unless include_sensitive, which needs the operator", async () => {
    const l = await m.callOk("list_sessions", { include_metadata: true });
    expect(l.sessions.length).toBeGreaterThan(0);
    for (const s of l.sessions) {
      expect(s).not.toHaveProperty("args");
      expect(s).not.toHaveProperty("command");
      expect(s).not.toHaveProperty("env_names");
    }
    const r = await m.call("list_sessions", { include_metadata: true, include_sensitive: true });
    expect(r.error?.code).toBe("PERMISSION_DENIED");
    const m2 = await connect(w, { CLAUDE_SESSIONS_ALLOW_SENSITIVE: "1" });
    try {
      const l2 = await m2.callOk("list_sessions", { include_metadata: true, include_sensitive: true });
      expect(l2.sessions.find((s) => s.team_name === "alpha")).toMatchObject({
        env_names: ["MY_TOKEN"],
        args: expect.any(Array),
      });
    } finally {
      await m2.close();
    }
  });

  it("audit: lines for a start, a send and a failed call, with no secret and no message text; the audit command prints them", async () => {
    const audit = readFileSync(join(w.stateDir, "audit.jsonl"), "utf8");
    const lines = audit
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.tool === "start_session" && l.outcome === "ok")).toMatchObject({
      client: "cs-test",
      actor: expect.stringMatching(/^mcp:stdio:cs-test\//),
      session_id: expect.any(String),
      duration_ms: expect.any(Number),
      time: expect.any(String),
    });
    expect(lines.find((l) => l.tool === "send_message" && l.outcome === "ok")).toBeDefined();
    expect(lines.find((l) => l.tool === "configure" && l.outcome === "error")).toMatchObject({ error_code: "PERMISSION_DENIED" });
    expect(lines.some((l) => l.tool === "list_sessions" || l.tool === "health_check")).toBe(false);
    expect(audit).not.toContain(SECRET);
    expect(audit).not.toContain(MESSAGE);
    expect(audit).not.toContain("ocelot");
    const out = spawnSync(process.execPath, [CLI, "audit", "--since", "1h"], { env: w.env, encoding: "utf8" });
    expect(out.status).toBe(0);
    expect(out.stdout.trim().split("\n").length).toBe(lines.length);
  });
});

/**
 * Issue 31 item 1 with the real CLI against the mock API: Claude Code's options on every backend that honours them,
 * each seen in what the CLI sends (the mock's request log): the system prompt, the model (a project's model left
 * out by setting_sources; the fallback model once the main one is overloaded), the effort level, the tools offered,
 * the sub-agents, the main thread's agent, an MCP server's tools (its env value expanded from the environment, never
 * written down), the beta header, and the debug log in the session's own directory. The options survive hibernate
 * and wake and a fork, and list_sessions include_metadata shows them (prompts and MCP servers left out).
 * One session per backend checks several options at once (these tests are slow).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";
import type { RecordedRequest } from "../fixtures/mock-anthropic.js";

const run = realClaudeOrSkip();

/** The project settings every session's folder has: setting_sources ["user"] must leave its model out. */
const PROJECT_MODEL = "claude-project-model";
const SECRET = "s3cret-mcp-value-9d1f";

const systemText = (r: RecordedRequest) => JSON.stringify(r.body?.system ?? "");
const toolNames = (r: RecordedRequest) => ((r.body?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
const effortOf = (r: RecordedRequest) => (r.body?.output_config as { effort?: string } | undefined)?.effort;

describe.runIf(run)("real claude: Claude's options on every backend", () => {
  let e: E2e;
  let m: Mcp;
  beforeAll(async () => {
    e = await e2eWorld({
      dirs: ["tmux", "pty", "headless", "headless-agent", "agent"],
      serverEnv: { CLAUDE_SESSIONS_ALLOW_MCP_SERVERS: "1" },
    });
    for (const d of ["tmux", "pty", "headless", "headless-agent", "agent"]) {
      mkdirSync(join(e.dir(d), ".claude"), { recursive: true });
      writeFileSync(join(e.dir(d), ".claude", "settings.json"), JSON.stringify({ model: PROJECT_MODEL }));
    }
    // The main model is overloaded: the CLI turns to fallback_model (2.1.330 after one 529, 2.1.197 after three).
    e.mock.setHandler((req) =>
      String(req.body?.model).startsWith("claude-primary-")
        ? { error: { status: 529, type: "overloaded_error", message: "Overloaded" } }
        : undefined,
    );
    m = await e.connect();
  });
  afterAll(async () => {
    await m?.close();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  /** The last request of a turn (after any overloaded attempts) whose prompt was `text`. */
  async function turnOf(text: string): Promise<RecordedRequest> {
    return until(
      () =>
        e
          .requestsWith(text)
          .filter((r) => !String(r.body?.model).startsWith("claude-primary-"))
          .at(-1),
      60_000,
      100,
    );
  }

  const CASES = [
    {
      name: "tmux",
      backend: "tmux",
      options: {
        model: "claude-primary-tmux",
        fallback_model: "claude-fallback-tmux",
        system_prompt: "SYSTEM-MARKER-tmux",
        setting_sources: ["user"],
        effort: "low",
        tools: ["Bash", "Read", "Agent"],
        agents: { reviewer: { description: "AGENT-MARKER-tmux reviews", prompt: "You review." } },
        mcp_servers: {
          cs: { command: process.execPath, args: [CLI], env: { CLAUDE_SESSIONS_TOOLSETS: "core", CS_PROBE: SECRET } },
        },
        strict_mcp_config: true,
        debug: true,
      },
    },
    {
      name: "pty",
      backend: "pty",
      options: {
        append_system_prompt: "APPEND-MARKER-pty",
        setting_sources: ["user", "local"],
        effort: "max",
        tools: ["Read"],
        agents: { guide: { description: "AGENT-MARKER-pty", prompt: "MAIN-AGENT-MARKER-pty" } },
        agent: "guide",
      },
    },
    {
      name: "headless-agent",
      backend: "headless",
      options: {
        append_system_prompt: "APPEND-MARKER-headless-agent",
        setting_sources: ["user"],
        effort: "max",
        tools: ["Read", "Agent"],
        agents: { guide: { description: "AGENT-MARKER-headless-agent", prompt: "MAIN-AGENT-MARKER-headless-agent" } },
        agent: "guide",
      },
    },
    {
      name: "headless",
      backend: "headless",
      options: {
        model: "claude-primary-headless",
        fallback_model: "claude-fallback-headless",
        system_prompt: "SYSTEM-MARKER-headless",
        setting_sources: ["user"],
        effort: "low",
        tools: ["Bash", "Read", "Agent"],
        agents: { reviewer: { description: "AGENT-MARKER-headless reviews", prompt: "You review." } },
        betas: ["context-1m-2025-08-07"],
        debug: true,
      },
    },
  ] as const;

  for (const c of CASES) {
    it(`${c.name}: each option reaches the API as the CLI's own flag`, async () => {
      const o = c.options as Record<string, unknown>;
      const s = await m.call("start_session", { cwd: e.dir(c.name), backend: c.backend, permission_mode: "default", ...o });
      expect(s.ok, s.text).toBe(true);
      const id = s.data.session_id as string;
      const prompt = `first-${c.name}`;
      const r = await m.callOk("send_message", { session_id: id, message: prompt, timeout_ms: 90_000 });
      expect(r.completed, JSON.stringify(r)).toBe(true);
      const req = await turnOf(prompt);

      if (o.fallback_model) expect(req.body?.model).toBe(o.fallback_model);
      else expect(req.body?.model).not.toBe(PROJECT_MODEL);
      if (o.fallback_model) expect(e.requestsWith(prompt).some((q) => q.body?.model === o.model)).toBe(true);
      if (o.system_prompt) expect(systemText(req)).toContain(o.system_prompt);
      if (o.append_system_prompt) expect(systemText(req)).toContain(o.append_system_prompt);
      if (o.agent) expect(systemText(req)).toContain(`MAIN-AGENT-MARKER-${c.name}`);
      expect(effortOf(req)).toBe(o.effort);
      const offered = toolNames(req);
      for (const t of o.tools as string[]) expect(offered).toContain(t);
      for (const t of ["Edit", "Write"]) expect(offered).not.toContain(t);
      expect(JSON.stringify(req.body)).toContain(`AGENT-MARKER-${c.name}`);
      if (o.betas) expect(String(req.headers["anthropic-beta"])).toContain("context-1m-2025-08-07");
      const dir = join(e.world.stateDir, id);
      if (o.debug)
        await until(
          () => existsSync(join(dir, "claude-debug.log")) && statSync(join(dir, "claude-debug.log")).size > 0,
          20_000,
          100,
        );

      if (o.mcp_servers) {
        // The server's tools arrive once it is connected: a later prompt's request lists the core ones only, so its
        // CLAUDE_SESSIONS_TOOLSETS (a variable the file names) was expanded from the CLI's environment.
        let n = 0;
        const listed = await until(
          async () => {
            const text = `mcp-${c.name}-${n++}`;
            await m.callOk("send_message", { session_id: id, message: text, timeout_ms: 60_000 });
            const body = JSON.stringify((await turnOf(text)).body);
            return body.includes("mcp__cs__list_sessions") ? body : undefined;
          },
          60_000,
          500,
        );
        expect(listed).not.toContain("mcp__cs__reset_session");
        const written = [join(e.world.stateDir, "state.json"), ...readdirSync(dir).map((f) => join(dir, f))].filter((f) =>
          statSync(f).isFile(),
        );
        for (const f of written) expect(readFileSync(f, "utf8"), f).not.toContain(SECRET);
      }

      // include_metadata shows the options (the caller's prompts and the MCP servers left out).
      const listed = await m.callOk("list_sessions", { include_metadata: true });
      const rec = listed.sessions.find((x) => x.session_id === id) as { options: Record<string, unknown> };
      expect(rec.options).toMatchObject({
        effort: o.effort,
        tools: o.tools,
        setting_sources: o.setting_sources,
        ...(o.agent ? { agent: o.agent } : {}),
        ...(o.debug ? { debug: true } : {}),
      });
      expect(rec.options).not.toHaveProperty("system_prompt");
      expect(rec.options).not.toHaveProperty("mcp_servers");
      expect(JSON.stringify(rec.options.agents)).toContain(`AGENT-MARKER-${c.name}`);
      expect(JSON.stringify(rec.options.agents)).not.toContain("prompt");

      // Hibernate and wake: the woken process runs with the same options.
      expect(await m.callOk("kill_session", { session_id: id, hibernate: true })).toMatchObject({ status: "hibernated" });
      const woke = `woke-${c.name}`;
      expect(await m.callOk("send_message", { session_id: id, message: woke, timeout_ms: 90_000 })).toMatchObject({
        completed: true,
        woke: true,
      });
      const after = await turnOf(woke);
      expect(effortOf(after)).toBe(o.effort);
      expect(toolNames(after)).not.toContain("Edit");
      if (o.system_prompt) expect(systemText(after)).toContain(o.system_prompt);
      if (o.agent) expect(systemText(after)).toContain(`MAIN-AGENT-MARKER-${c.name}`);

      // A fork runs with them too.
      const forked = `fork-${c.name}`;
      const f = await m.callOk("resume_session", { session_id: id, fork: true, message: forked });
      const fr = await turnOf(forked);
      expect(effortOf(fr)).toBe(o.effort);
      expect(toolNames(fr)).not.toContain("Edit");
      await m.callOk("kill_session", { session_id: f.session_id });
      await m.callOk("kill_session", { session_id: id });
    }, 300_000);
  }

  it("resume_at: a fork from an earlier message (get_conversation's uuid) sends the conversation up to it only; a uuid not of it is refused; a terminal names headless", async () => {
    const s = await m.callOk("start_session", { cwd: e.dir("agent"), backend: "headless", permission_mode: "default" });
    const id = s.session_id;
    for (const text of ["at-one", "at-two"])
      expect(await m.callOk("send_message", { session_id: id, message: text, timeout_ms: 60_000 })).toMatchObject({
        completed: true,
      });
    const items = await until(
      async () => {
        const c = await m.call("get_conversation", { claude_session_id: s.claude_session_id, limit: 50 });
        const list = (c.data?.items ?? []) as Array<{ role: string; text: string; uuid?: string }>;
        return list.some((i) => i.text.includes("MOCK REPLY: at-two")) ? list : undefined;
      },
      30_000,
      200,
    );
    const first = items.find((i) => i.role === "assistant" && i.text.includes("MOCK REPLY: at-one"));
    expect(first?.uuid).toMatch(/^[0-9a-f-]{36}$/);

    const other = "0b7cf3a2-5a52-4a40-9a4e-3f3c1b7c8d11";
    const bad = await m.call("resume_session", { session_id: id, fork: true, resume_at: other, message: "never" });
    expect(bad.error?.code, bad.text).toBe("INVALID_ARGUMENT");
    expect(bad.error?.suggestion).toContain("get_conversation");
    const term = await m.call("resume_session", {
      session_id: id,
      fork: true,
      backend: "tmux",
      resume_at: first!.uuid,
      message: "never",
    });
    expect(term.error?.code, term.text).toBe("UNSUPPORTED_OPTION");
    expect(term.error?.message).toMatch(/resume_at is honoured by the headless backend only/);
    expect(e.requestsWith("never")).toEqual([]);

    const f = await m.callOk("resume_session", { session_id: id, fork: true, resume_at: first!.uuid, message: "at-three" });
    const req = await turnOf("at-three");
    const texts = e.userTexts(req);
    expect(texts).toContain("at-one");
    expect(texts).not.toContain("at-two");
    await m.callOk("kill_session", { session_id: f.session_id });
    await m.callOk("kill_session", { session_id: id });
  }, 180_000);

  it("tmux and pty refuse output_schema and betas (the interactive CLI ignores --json-schema and --betas) with UNSUPPORTED_OPTION naming headless", async () => {
    for (const backend of ["tmux", "pty"] as const) {
      const r = await m.call("start_session", { cwd: e.dir("agent"), backend, output_schema: { type: "object" } });
      expect(r.error?.code, r.text).toBe("UNSUPPORTED_OPTION");
      expect(r.error?.message).toMatch(/output_schema is honoured by the headless backend only/);
      expect(r.error?.suggestion).toContain('backend: "headless"');
    }
  });
});

/**
 * Issue 31 item 1: Claude's options on every backend as the CLI's own flags. A terminal session's argv (files in
 * its own directory for JSON and long text, MCP secrets through the environment only), the headless session's SDK
 * options, and the operator's gate on sub-agents with tools.
 */
import { describe, expect, it } from "vitest";
import { startInput } from "../../src/api/index.js";
import { buildSdkOptions } from "../../src/runners/headless/options.js";
import { headlessOptionsOf } from "../../src/runners/headless/stored.js";
import type { HeadlessOptions } from "../../src/runners/headless/types.js";
import { MCP_VALUE_ENV, terminalOptionArgs } from "../../src/runners/terminal/option-args.js";
import { checkWidening } from "../../src/sessions/gates.js";
import { loadConfig } from "../../src/config.js";

const agents = {
  rev: { description: "Reviews code", prompt: "You review.", tools: ["Read"], disallowed_tools: ["Bash"], model: "haiku" },
};

describe("terminal option argv", () => {
  it("every option is one --flag=value (JSON inline only for --agents); the system prompt and MCP servers are files", () => {
    const o = terminalOptionArgs("/s/id", {
      system_prompt: "You are terse.\n--model=evil",
      fallback_model: "claude-haiku-4-5",
      setting_sources: ["user", "local"],
      strict_mcp_config: true,
      mcp_servers: {
        probe: { command: "/bin/srv", args: ["-x"], env: { TOKEN: "s3cret" } },
        web: { type: "http", url: "https://h.example/mcp", headers: { Authorization: "Bearer t0k" } },
      },
      effort: "low",
      agents,
      agent: "rev",
      tools: ["Bash", "Read"],
      debug: true,
    });
    expect(o.args).toEqual([
      "--system-prompt-file=/s/id/system-prompt.txt",
      "--fallback-model=claude-haiku-4-5",
      "--setting-sources=user,local",
      "--mcp-config=/s/id/mcp-servers.json",
      "--strict-mcp-config",
      "--effort=low",
      `--agents=${JSON.stringify({ rev: { description: "Reviews code", prompt: "You review.", tools: ["Read"], disallowedTools: ["Bash"], model: "haiku" } })}`,
      "--agent=rev",
      "--tools=Bash,Read",
      "--debug-file=/s/id/claude-debug.log",
    ]);
    expect(o.files.map((f) => f.path)).toEqual(["/s/id/system-prompt.txt", "/s/id/mcp-servers.json"]);
    expect(o.files[0]!.text).toBe("You are terse.\n--model=evil");
    // The secrets are in the child's environment only: the file (and argv) name the variables.
    const mcp = o.files[1]!.text;
    expect(mcp).not.toMatch(/s3cret|t0k/);
    expect(JSON.stringify(o.args)).not.toMatch(/s3cret|t0k/);
    expect(JSON.parse(mcp)).toEqual({
      mcpServers: {
        probe: { command: "/bin/srv", args: ["-x"], env: { TOKEN: `\${${MCP_VALUE_ENV}0}` } },
        web: { type: "http", url: "https://h.example/mcp", headers: { Authorization: `\${${MCP_VALUE_ENV}1}` } },
      },
    });
    expect(o.env).toEqual({ [`${MCP_VALUE_ENV}0`]: "s3cret", [`${MCP_VALUE_ENV}1`]: "Bearer t0k" });
  });

  it("no options, no flags; an empty tool set is --tools= (none)", () => {
    expect(terminalOptionArgs("/d", {})).toEqual({ args: [], files: [], env: {} });
    expect(terminalOptionArgs("/d", { tools: [], setting_sources: [] }).args).toEqual(["--setting-sources=", "--tools="]);
  });
});

describe("headless SDK options", () => {
  const base: Omit<HeadlessOptions, "live"> = {
    cwd: "/w",
    claude_path: "/bin/claude",
    events_path: "/s/e.jsonl",
    settings_path: "/s/settings.json",
    base_env: { PATH: "/bin" },
  };
  it("effort, agents (the SDK's field names), agent, tools, betas and the debug file", () => {
    const launch = headlessOptionsOf({
      effort: "max",
      agents,
      agent: "rev",
      tools: [],
      betas: ["context-1m-2025-08-07"],
      debug: true,
    });
    const { options } = buildSdkOptions({
      ...base,
      ...launch,
      debug_file: "/s/claude-debug.log",
      claude_session_id: "11111111-2222-3333-4444-555555555555",
    });
    expect(options).toMatchObject({
      effort: "max",
      agents: {
        rev: { description: "Reviews code", prompt: "You review.", tools: ["Read"], disallowedTools: ["Bash"], model: "haiku" },
      },
      agent: "rev",
      tools: [],
      betas: ["context-1m-2025-08-07"],
      debugFile: "/s/claude-debug.log",
    });
  });
});

describe("resume_at", () => {
  const base: Omit<HeadlessOptions, "live"> = {
    cwd: "/w",
    claude_path: "/bin/claude",
    events_path: "/s/e.jsonl",
    settings_path: "/s/settings.json",
    base_env: { PATH: "/bin" },
  };
  it("a fork from a message is the SDK's resumeSessionAt", () => {
    const at = "0b7cf3a2-5a52-4a40-9a4e-3f3c1b7c8d11";
    const { options } = buildSdkOptions({ ...base, resume: "p", fork_session: true, claude_session_id: "n", resume_at: at });
    expect(options).toMatchObject({ resume: "p", forkSession: true, sessionId: "n", resumeSessionAt: at });
    expect(buildSdkOptions({ ...base, resume: "p" }).options).not.toHaveProperty("resumeSessionAt");
  });
});

describe("start_session's new options", () => {
  it("the schema takes them and refuses bad ones", () => {
    expect(
      startInput.safeParse({
        cwd: "/x",
        effort: "xhigh",
        agents,
        agent: "rev",
        tools: ["Bash"],
        betas: ["context-1m-2025-08-07"],
        debug: true,
      }).success,
    ).toBe(true);
    expect(startInput.safeParse({ cwd: "/x", effort: "huge" }).success).toBe(false);
    expect(startInput.safeParse({ cwd: "/x", betas: ["anything-else"] }).success).toBe(false);
    expect(startInput.safeParse({ cwd: "/x", agent: "../x" }).success).toBe(false);
    expect(startInput.safeParse({ cwd: "/x", tools: ["Bash,Read"] }).success).toBe(false);
    expect(startInput.safeParse({ cwd: "/x", agents: { a: { description: "d", prompt: "p", hooks: {} } } }).success).toBe(false);
    expect(
      startInput.safeParse({
        cwd: "/x",
        agents: { a: { description: "d", prompt: "p".repeat(50_000) }, b: { description: "d", prompt: "p".repeat(50_000) } },
      }).success,
    ).toBe(false);
  });

  it("a sub-agent with its own tools passes the allowed_tools gate (CLAUDE_SESSIONS_ALLOW_TOOL_RULES=0 refuses it)", () => {
    const off = loadConfig({ CLAUDE_SESSIONS_ALLOW_TOOL_RULES: "0" });
    expect(() => checkWidening(off, { agents })).toThrow(
      expect.objectContaining({ code: "PERMISSION_DENIED", message: expect.stringMatching(/agents\.rev\.tools/) }),
    );
    expect(() => checkWidening(off, { agents: { rev: { description: "d", prompt: "p" } } as never })).not.toThrow();
    expect(() => checkWidening(loadConfig({}), { agents })).not.toThrow();
  });
});

/** The headless backend's pure parts: which options a backend honours, stored options read back, SDK results → tool figures, log lines. */
import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import { startInput } from "../../src/api/index.js";
import { figuresOf } from "../../src/runners/headless/driver.js";
import { logLine } from "../../src/runners/headless/log-lines.js";
import type { TurnResult } from "../../src/runners/headless/types.js";
import { HeadlessDriver } from "../../src/runners/headless/driver.js";
import { HeadlessHost } from "../../src/runners/headless/host.js";
import { headlessRunner } from "../../src/runners/headless/runner.js";
import { TerminalDriver } from "../../src/runners/terminal/driver.js";
import { terminalRunner } from "../../src/runners/terminal/runner.js";
import {
  checkBackendOptions,
  checkVersionOptions,
  optionsFor,
  storedHeadlessOptions,
  transientOptions,
} from "../../src/sessions/launch/options.js";
import { createLogger } from "../../src/util/log.js";
import { FakeBackend } from "../helpers/fake-backend.js";

const log = createLogger({ level: "error" });
const terminal = (kind: "tmux" | "pty") => {
  const b = new FakeBackend(kind);
  return terminalRunner(b, new TerminalDriver(b, log));
};
const headlessHost = new HeadlessHost({ log });
const runners = {
  tmux: terminal("tmux"),
  pty: terminal("pty"),
  headless: headlessRunner(headlessHost, new HeadlessDriver(headlessHost)),
};
const all = Object.values(runners);

describe("headless options", () => {
  it("a headless-only option on tmux or pty is UNSUPPORTED_OPTION, naming the backend that honours it; doppler on headless too", () => {
    for (const kind of ["tmux", "pty"] as const) {
      expect(() =>
        checkBackendOptions(runners[kind], all, { output_schema: { type: "object" }, betas: ["context-1m-2025-08-07"] }, false),
      ).toThrow(
        expect.objectContaining({
          code: "UNSUPPORTED_OPTION",
          message: expect.stringMatching(/output_schema, betas are honoured by the headless backend only/),
        }),
      );
      expect(() => checkBackendOptions(runners[kind], all, { max_turns: 3 }, true)).not.toThrow();
      // What the interactive CLI honours (measured: docs/configuration.md) is taken on a terminal.
      const terminalToo = {
        system_prompt: "x",
        fallback_model: "f",
        mcp_servers: {},
        strict_mcp_config: true,
        setting_sources: ["user" as const],
        effort: "low" as const,
        agents: {},
        agent: "a",
        tools: [],
        debug: true,
      };
      expect(() => checkBackendOptions(runners[kind], all, terminalToo, false)).not.toThrow();
      expect(() => checkBackendOptions(runners.headless, all, terminalToo, false)).not.toThrow();
    }
    expect(() => checkBackendOptions(runners.headless, all, { max_budget_usd: 1 }, true)).toThrow(
      expect.objectContaining({ code: "UNSUPPORTED_OPTION", message: expect.stringMatching(/tmux and pty/) }),
    );
    expect(() => checkBackendOptions(runners.headless, all, { max_budget_usd: 1, mcp_servers: {} }, false)).not.toThrow();
    // Only runners this server has are named: with no headless runner, nobody honours output_schema.
    expect(() => checkBackendOptions(runners.tmux, [runners.tmux], { output_schema: {} }, false)).toThrow(
      /honoured by no backend of this server/,
    );
  });

  it("an option a CLI version is too old for on a backend is UNSUPPORTED_OPTION naming the version and the backends that take it", () => {
    const input = { mcp_servers: { s: { type: "http" as const, url: "https://h.example/mcp" } } };
    expect(() => checkVersionOptions(runners.headless, all, "2.1.197", input)).toThrow(
      expect.objectContaining({
        code: "UNSUPPORTED_OPTION",
        message: expect.stringMatching(/mcp_servers needs Claude Code 2\.1\.330 or later on headless \(this CLI is 2\.1\.197\)/),
      }),
    );
    expect(() => checkVersionOptions(runners.headless, all, "2.1.197", input)).toThrow(
      expect.objectContaining({ suggestion: expect.stringMatching(/backend: "tmux" or "pty"/) }),
    );
    expect(() => checkVersionOptions(runners.headless, all, "2.1.330", input)).not.toThrow();
    expect(() => checkVersionOptions(runners.headless, all, "2.1.197", {})).not.toThrow();
    expect(() => checkVersionOptions(runners.tmux, all, "2.1.197", input)).not.toThrow();
  });

  it("stores the SDK options but never mcp_servers (their env and headers may hold secrets); a take-over to a terminal drops them", () => {
    const input = startInput.parse({
      cwd: "/x",
      max_turns: 2,
      max_budget_usd: 0.5,
      system_prompt: "be brief",
      mcp_servers: { s: { command: "srv", env: { TOKEN: "secret" } } },
      setting_sources: [],
    });
    const stored = storedHeadlessOptions(runners.headless, input);
    expect(stored).toEqual({ max_turns: 2, max_budget_usd: 0.5, system_prompt: "be brief", setting_sources: [] });
    expect(JSON.stringify(stored)).not.toContain("secret");
    // A terminal keeps what it honours, max_turns aside (the server counts a terminal's prompts in the record).
    expect(storedHeadlessOptions(runners.tmux, input)).toEqual({ system_prompt: "be brief", setting_sources: [] });
    expect(transientOptions(input)).toEqual({ mcp_servers: { s: { command: "srv", env: { TOKEN: "secret" } } } });
    expect(optionsFor(runners.tmux, { model: "m", ...stored, output_schema: {} }, {})).toEqual({
      model: "m",
      system_prompt: "be brief",
      setting_sources: [],
    });
    expect(optionsFor(runners.headless, { model: "m", max_turns: 2 }, { max_turns: 5, fallback_model: "f" })).toEqual({
      model: "m",
      max_turns: 5,
      fallback_model: "f",
    });
  });
});

describe("headless results", () => {
  const turn: TurnResult = {
    claude_session_id: "c",
    subtype: "error_max_turns",
    is_error: true,
    error_subtype: "error_max_turns",
    interrupted: false,
    result: "",
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 1, cache_read_input_tokens: 2 },
    model_usage: {
      "claude-x": {
        inputTokens: 10,
        outputTokens: 5,
        cacheCreationInputTokens: 1,
        cacheReadInputTokens: 2,
        webSearchRequests: 0,
        costUSD: 0.01,
        contextWindow: 1,
        maxOutputTokens: 1,
      },
    },
    cost_usd: 0.01,
    total_cost_usd: 0.03,
    duration_ms: 120,
    duration_api_ms: 80,
    num_turns: 2,
    stop_reason: null,
    permission_denials: [{ tool_name: "Bash", tool_use_id: "t1", tool_input: { command: "ls" } }],
  };

  it("the SDK's turn result → the tools' figures (usage per model in the tools' shape, the turn's own cost)", () => {
    expect(figuresOf(turn)).toEqual({
      usage: turn.usage,
      model_usage: {
        "claude-x": { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 1, cache_read_input_tokens: 2 },
      },
      cost_usd: 0.01,
      // claude-x has no price in the server's table: the CLI's figure cannot be vouched for.
      cost_complete: false,
      duration_ms: 120,
      duration_api_ms: 80,
      num_turns: 2,
      stop_reason: null,
      error_subtype: "error_max_turns",
      permission_denials: [{ tool_name: "Bash", tool_use_id: "t1", tool_input: { command: "ls" } }],
    });
    expect(figuresOf({ ...turn, error_subtype: undefined, structured_output: { a: 1 } }).structured_output).toEqual({ a: 1 });
    expect(figuresOf({ ...turn, model_usage: { "claude-opus-4-8": turn.model_usage["claude-x"]! } }).cost_complete).toBe(true);
  });

  it("stream_output log lines: assistant text, tool uses, results", () => {
    const assistant = {
      type: "assistant",
      message: {
        content: [
          { type: "text", text: "hi" },
          { type: "tool_use", id: "t", name: "Bash", input: { command: "ls" } },
        ],
      },
    } as const;
    expect(logLine(assistant as unknown as SDKMessage)).toBe('hi\n[tool] Bash {"command":"ls"}\n');
    const result = { type: "result", subtype: "success", is_error: false, duration_ms: 12, num_turns: 1 } as const;
    expect(logLine(result as unknown as SDKMessage)).toBe("[result] done in 12 ms, 1 turn(s)\n");
    expect(logLine({ type: "system" } as unknown as SDKMessage)).toBeUndefined();
  });
});

/**
 * The headless engine's pure parts: options → SDK Options, answers → PermissionResult, running totals →
 * per-turn figures, the prompt queue, and the totals a resumed transcript saved.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelUsage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import { PromptQueue } from "../../src/runners/headless/input.js";
import { buildSdkOptions } from "../../src/runners/headless/options.js";
import { timeoutMessage, toPermissionResult } from "../../src/runners/headless/permissions.js";
import { savedTotals, toTurnResult, zeroTotals } from "../../src/runners/headless/result.js";
import type { HeadlessOptions } from "../../src/runners/headless/types.js";

const base: Omit<HeadlessOptions, "live"> = {
  cwd: "/w",
  claude_path: "/bin/claude",
  events_path: "/s/e.jsonl",
  settings_path: "/s/settings.json",
  base_env: { PATH: "/bin", CLAUDECODE: "1", TERM: "xterm" },
};

describe("buildSdkOptions", () => {
  it("a new session: its own id, our settings and binary, env without what breaks a nested start", () => {
    const { options, claudeSessionId } = buildSdkOptions({
      ...base,
      env: { SECRET: "x" },
      claude_session_id: "11111111-2222-3333-4444-555555555555",
    });
    expect(claudeSessionId).toBe("11111111-2222-3333-4444-555555555555");
    expect(options).toEqual({
      cwd: "/w",
      env: { PATH: "/bin", SECRET: "x" },
      pathToClaudeCodeExecutable: "/bin/claude",
      settings: "/s/settings.json",
      sessionId: claudeSessionId,
    });
  });

  it("every option maps; MCP servers travel in the initialize request; bypass needs its SDK flag", () => {
    const { options } = buildSdkOptions({
      ...base,
      model: "m",
      permission_mode: "bypassPermissions",
      append_system_prompt: "be brief",
      max_turns: 3,
      max_budget_usd: 0.5,
      fallback_model: "f",
      mcp_servers: { a: { command: "x", env: { T: "t" } } },
      strict_mcp_config: true,
      setting_sources: ["project"],
      output_schema: { type: "object" },
      allowed_tools: ["Read"],
      disallowed_tools: ["Bash"],
      add_dirs: ["/d"],
    });
    expect(options).toMatchObject({
      model: "m",
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
      systemPrompt: { type: "preset", preset: "claude_code", append: "be brief" },
      maxTurns: 3,
      maxBudgetUsd: 0.5,
      fallbackModel: "f",
      mcpServers: { a: { command: "x", env: { T: "t" } } },
      mcpServersDelivery: "initialize",
      strictMcpConfig: true,
      settingSources: ["project"],
      outputFormat: { type: "json_schema", schema: { type: "object" } },
      allowedTools: ["Read"],
      disallowedTools: ["Bash"],
      additionalDirectories: ["/d"],
    });
    expect(buildSdkOptions({ ...base, system_prompt: "replace", append_system_prompt: "ignored" }).options.systemPrompt).toBe(
      "replace",
    );
  });

  it("resume keeps the id; fork chooses a new one", () => {
    const r = buildSdkOptions({ ...base, resume: "aaaa" });
    expect(r.claudeSessionId).toBe("aaaa");
    expect(r.options).toMatchObject({ resume: "aaaa" });
    expect(r.options.sessionId).toBeUndefined();
    const f = buildSdkOptions({ ...base, resume: "aaaa", fork_session: true });
    expect(f.claudeSessionId).not.toBe("aaaa");
    expect(f.options).toMatchObject({ resume: "aaaa", forkSession: true, sessionId: f.claudeSessionId });
  });
});

describe("permission answers", () => {
  const input = { command: "ls" };
  const rule = {
    type: "addRules" as const,
    rules: [{ toolName: "Bash", ruleContent: "ls *" }],
    behavior: "allow" as const,
    destination: "session" as const,
  };
  it("allow, allow_always (with the suggestions), updated input, deny with and without a message", () => {
    expect(toPermissionResult({ decision: "allow" }, input, [rule])).toEqual({ behavior: "allow", updatedInput: input });
    expect(toPermissionResult({ decision: "allow_always" }, input, [rule])).toEqual({
      behavior: "allow",
      updatedInput: input,
      updatedPermissions: [rule],
    });
    expect(toPermissionResult({ decision: "allow", updated_input: { command: "ls -a" } }, input, [])).toEqual({
      behavior: "allow",
      updatedInput: { command: "ls -a" },
    });
    expect(toPermissionResult({ decision: "deny", message: "no" }, input, [])).toEqual({ behavior: "deny", message: "no" });
    expect(toPermissionResult({ decision: "deny" }, input, [])).toEqual({
      behavior: "deny",
      message: "The user denied this tool use.",
    });
    expect(timeoutMessage(90_000)).toContain("90 s");
  });
});

function result(over: Partial<SDKResultMessage>): SDKResultMessage {
  const usage = { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const r = {
    type: "result",
    subtype: "success",
    duration_ms: 50,
    duration_api_ms: 40,
    is_error: false,
    num_turns: 1,
    result: "ok",
    stop_reason: "end_turn",
    total_cost_usd: 0.1,
    usage,
    modelUsage: {},
    permission_denials: [],
    uuid: "u-u-u-u-u",
    session_id: "s",
  };
  return Object.assign(r, over) as SDKResultMessage;
}

const mu = (input: number, output: number, cost: number): ModelUsage => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  webSearchRequests: 0,
  costUSD: cost,
  contextWindow: 1000,
  maxOutputTokens: 100,
});

describe("toTurnResult", () => {
  it("subtracts the running totals (cost, model usage, api time); keeps the per-turn figures", () => {
    const one = toTurnResult(
      result({ total_cost_usd: 0.04662, duration_api_ms: 58, modelUsage: { m: mu(100, 9, 0.04662) } }),
      zeroTotals(),
      false,
    );
    expect(one.turn).toMatchObject({
      cost_usd: 0.04662,
      total_cost_usd: 0.04662,
      duration_api_ms: 58,
      model_usage: { m: { inputTokens: 100, costUSD: 0.04662 } },
    });
    const two = toTurnResult(
      result({ total_cost_usd: 0.140572, duration_api_ms: 100, modelUsage: { m: mu(300, 32, 0.140572) } }),
      one.totals,
      false,
    );
    expect(two.turn).toMatchObject({
      cost_usd: 0.093952,
      duration_api_ms: 42,
      model_usage: { m: { inputTokens: 200, outputTokens: 23, costUSD: 0.093952, contextWindow: 1000 } },
    });
  });

  it("errors: the subtype for SDK errors, api_error for an API error, interrupted as given", () => {
    const e = toTurnResult(
      result({ subtype: "error_max_turns", is_error: true, errors: ["Reached maximum number of turns (1)"] }),
      zeroTotals(),
      false,
    ).turn;
    expect(e).toMatchObject({ error_subtype: "error_max_turns", errors: ["Reached maximum number of turns (1)"], result: "" });
    const api = toTurnResult(
      result({ is_error: true, result: "API Error: 400 x", terminal_reason: "api_error" }),
      zeroTotals(),
      false,
    ).turn;
    expect(api).toMatchObject({ error_subtype: "api_error", errors: ["API Error: 400 x"] });
    expect(
      toTurnResult(result({ subtype: "error_during_execution", is_error: true, errors: [] }), zeroTotals(), true).turn
        .interrupted,
    ).toBe(true);
  });

  it("savedTotals reads the transcript's last cost-state line, defensively", async () => {
    const d = mkdtempSync(join(tmpdir(), "cs-totals-"));
    const f = join(d, "t.jsonl");
    writeFileSync(
      f,
      [
        '{"type":"user"}',
        '{"type":"cost-state","totalCostUSD":0.1,"totalAPIDuration":5,"modelUsage":{"m":{"inputTokens":1}}}',
        '{"type":"cost-state","totalCostUSD":0.2,"totalAPIDuration":9,"modelUsage":{}}',
        '{"type":"cost-st',
      ].join("\n"),
    );
    expect(await savedTotals(f)).toEqual({ cost_usd: 0.2, api_ms: 9, models: {} });
    expect(await savedTotals(join(d, "missing.jsonl"))).toEqual(zeroTotals());
  });
});

describe("PromptQueue", () => {
  it("yields prompts in order, as given, and ends when closed", async () => {
    const q = new PromptQueue();
    q.push("a\x1b[201~b");
    q.push("/x", { verbatim: true });
    setTimeout(() => {
      q.push("late");
      q.end();
    }, 10);
    const got = [];
    for await (const m of q) got.push([m.message.content, m.client_composed ?? false]);
    expect(got).toEqual([
      ["a\x1b[201~b", false],
      ["/x", true],
      ["late", false],
    ]);
    expect(() => q.push("after")).toThrow();
  });
});

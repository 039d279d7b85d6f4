/**
 * The headless engine (src/headless) running the real pinned CLI through the Agent SDK, offline against
 * tests/fixtures/mock-anthropic.ts: turns, figures, byte-exact prompts, errors, limits, interrupts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HeadlessSession } from "../../src/runners/headless/session.js";
import { headlessCliOrSkip, headlessWorld, hookNames, type HeadlessWorld } from "../helpers/headless.js";
import { until } from "../helpers/wait.js";

const run = headlessCliOrSkip();

describe.runIf(run)("headless engine: turns on the real CLI", () => {
  let w: HeadlessWorld;
  let s: HeadlessSession;
  beforeAll(async () => {
    w = await headlessWorld({ dirs: ["main", "limits", "budget", "schema", "p1", "p2", "closing"] });
    s = await w.start("main", "main");
  });
  afterAll(async () => {
    await w?.cleanup();
  });

  it("starts ready with the hooks' SessionStart before any prompt, under the Claude session id it chose", async () => {
    expect(s.fold.status).toBe("ready");
    expect(s.claudeSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(hookNames(w.events("main"))).toEqual(["cs:spawn", "SessionStart"]);
    expect(w.events("main")[1]?.session_id).toBe(s.claudeSessionId);
  });

  it("a turn's usage and cost are the figures the mock reported", async () => {
    const from = w.mock.requests.length;
    const r = await s.send("hello there");
    expect(r).toMatchObject({
      subtype: "success",
      is_error: false,
      interrupted: false,
      result: "MOCK REPLY: hello there",
      num_turns: 1,
      stop_reason: "end_turn",
      claude_session_id: s.claudeSessionId,
    });
    const reqs = w.mainSince(from);
    expect(reqs).toHaveLength(1);
    const reported = reqs[0]!.reply!.usage!;
    expect(r.usage).toEqual(reported);
    const models = Object.keys(r.model_usage);
    expect(models).toEqual([reqs[0]!.model]);
    const mu = r.model_usage[models[0]!]!;
    expect(mu).toMatchObject({ inputTokens: reported.input_tokens, outputTokens: reported.output_tokens });
    expect(r.cost_usd).toBeGreaterThan(0);
    expect(r.cost_usd).toBeCloseTo(mu.costUSD, 9);
    expect(r.total_cost_usd).toBeCloseTo(r.cost_usd, 9);

    // A second turn with a tool call: two requests, summed; cost and api time are this turn's only.
    const from2 = w.mock.requests.length;
    const r2 = await s.send("MOCK_BASH:echo hi");
    expect(r2).toMatchObject({ subtype: "success", result: "MOCK: tool done", num_turns: 2 });
    const reqs2 = w.mainSince(from2);
    expect(reqs2).toHaveLength(2);
    const sum = (k: "input_tokens" | "output_tokens") => reqs2.reduce((n, q) => n + q.reply!.usage![k], 0);
    expect(r2.usage).toEqual({
      input_tokens: sum("input_tokens"),
      output_tokens: sum("output_tokens"),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(r2.model_usage[models[0]!]).toMatchObject({ inputTokens: sum("input_tokens"), outputTokens: sum("output_tokens") });
    expect(r2.total_cost_usd).toBeCloseTo(r.total_cost_usd + r2.cost_usd, 9);
    expect(r2.cost_usd).toBeGreaterThan(r.cost_usd);
    expect(r2.duration_api_ms).toBeLessThanOrEqual(r2.duration_ms);

    const f = s.fold;
    expect(f).toMatchObject({
      status: "idle",
      turn_count: 2,
      prompts_submitted: 2,
      last_response: "MOCK: tool done",
      last_turn: "completed",
    });
    expect(hookNames(w.events("main")).slice(2)).toEqual([
      "UserPromptSubmit",
      "Stop",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
  });

  it("prompts arrive byte-exact at the API and in the UserPromptSubmit hook (no terminal in between)", async () => {
    const hostile = [
      "!echo this is not bash mode",
      "# not a memory note",
      "/not-a-command but text",
      "ctrl \x01\x02\x07\x08\x0b\x0c\x7f chars",
      "paste end \x1b[201~ then\r\nmore \x1b[200~ and \x03 \x1b",
      "tab\there\n\nblank line above\n",
      "   leading and trailing spaces   ",
      "unicode ✓ 😀 \u202e reversed \u0000 nul",
      "$(touch pwned) `id` ; | & > /tmp/x #{pane_id} #(id) ';",
      "x".repeat(20_000),
    ];
    for (const p of hostile) {
      const from = w.mock.requests.length;
      const r = await s.send(p, { verbatim: p.startsWith("/") });
      const reqs = w.mainSince(from);
      expect(
        reqs.map((q) => q.lastUserText),
        JSON.stringify(p.slice(0, 40)),
      ).toEqual([p]);
      expect(r.result).toBe(`MOCK REPLY: ${p}`);
      expect(s.fold.last_prompt).toBe(p);
    }
  });

  it("an API error ends the turn with error_subtype and the API's message; the session stays usable", async () => {
    const r = await s.send("MOCK_ERROR:400");
    expect(r).toMatchObject({ is_error: true, error_subtype: "api_error", interrupted: false });
    expect(r.errors?.join(" ")).toContain("400");
    expect(s.fold).toMatchObject({ status: "idle", last_turn: "failed" });
    expect(s.fold.last_error).toContain("400");
    // The CLI's StopFailure hook may land after the SDK's result on a loaded machine.
    await until(async () => hookNames(w.events("main")).includes("StopFailure"), 10_000);
    const ok = await s.send("after the error");
    expect(ok.result).toBe("MOCK REPLY: after the error");
  });

  it("interrupt ends the running turn (interrupted, cs:interrupted in the log) and the next prompt works", async () => {
    const from = w.mock.requests.length;
    const turn = s.send("MOCK_SLOW:30 a slow one");
    await w.mock.waitForRequest((q) => q.seq > from && q.lastUserText === "MOCK_SLOW:30 a slow one", 20_000);
    // The request can reach the mock before the UserPromptSubmit line is folded (the log is read on fs.watch).
    expect((await s.waitFor((f) => f.status === "busy", 5000))?.status).toBe("busy");
    const t0 = Date.now();
    expect(await s.interrupt()).toBe(true);
    const r = await turn;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ interrupted: true, error_subtype: "error_during_execution" });
    expect(s.fold).toMatchObject({ status: "idle", last_turn: "interrupted" });
    expect(hookNames(w.events("main")).at(-1)).toBe("cs:interrupted");
    expect(await s.interrupt()).toBe(false);
    expect((await s.send("after the interrupt")).result).toBe("MOCK REPLY: after the interrupt");
  });

  it("max_turns stops a turn (error_max_turns, cs:turn_failed) and the session goes on", async () => {
    const t = await w.start("limits", "limits", { max_turns: 1 });
    const r = await t.send("MOCK_BASH:echo one");
    expect(r).toMatchObject({ is_error: true, error_subtype: "error_max_turns", subtype: "error_max_turns" });
    expect(r.errors?.[0]).toContain("maximum number of turns");
    expect(t.fold).toMatchObject({ status: "idle", last_turn: "failed", turn_count: 1 });
    const names = hookNames(w.events("limits"));
    expect(names).not.toContain("Stop");
    expect(names.at(-1)).toBe("cs:turn_failed");
    expect((await t.send("plain")).result).toBe("MOCK REPLY: plain");
  });

  it("max_budget_usd stops a turn with error_max_budget_usd", async () => {
    const t = await w.start("budget", "budget", { max_budget_usd: 0.001 });
    const from = w.mock.requests.length;
    const r = await t.send("spend something");
    expect(r).toMatchObject({ is_error: true, error_subtype: "error_max_budget_usd" });
    expect(r.cost_usd).toBeGreaterThan(0.001);
    expect(w.mainSince(from)).toHaveLength(1);
    expect(t.fold).toMatchObject({ status: "idle", last_turn: "failed" });
    expect(hookNames(w.events("budget")).at(-1)).toBe("cs:turn_failed");
  });

  it("output_schema gives structured_output", async () => {
    const schema = {
      type: "object",
      properties: { answer: { type: "string" }, n: { type: "number" } },
      required: ["answer", "n"],
    };
    const t = await w.start("schema", "schema", { output_schema: schema });
    let toolName = "";
    w.mock.setNextReply((req) => {
      const tools: Array<{ name: string; input_schema?: unknown }> = Array.isArray(req.body?.tools) ? req.body.tools : [];
      const tool = tools.find((x) => /structured/i.test(x.name));
      toolName = tool?.name ?? "";
      return tool ? { blocks: [{ type: "tool_use", name: tool.name, input: { answer: "forty-two", n: 42 } }] } : undefined;
    });
    const r = await t.send("answer in the schema");
    expect(toolName).not.toBe("");
    expect(r).toMatchObject({ subtype: "success", is_error: false, structured_output: { answer: "forty-two", n: 42 } });
    expect(t.fold).toMatchObject({ status: "idle", turn_count: 1, prompts_submitted: 1 });
  });

  it("two sessions run turns in parallel, each with its own id, log and replies", async () => {
    const [a, b] = await Promise.all([w.start("p1", "p1"), w.start("p2", "p2")]);
    expect(a.claudeSessionId).not.toBe(b.claudeSessionId);
    const [ra, rb] = await Promise.all([a.send("MOCK_SLOW:0.5 from a"), b.send("MOCK_SLOW:0.5 from b")]);
    expect(ra.result).toBe("MOCK REPLY: MOCK_SLOW:0.5 from a");
    expect(rb.result).toBe("MOCK REPLY: MOCK_SLOW:0.5 from b");
    expect(ra.claude_session_id).toBe(a.claudeSessionId);
    expect(rb.claude_session_id).toBe(b.claudeSessionId);
    expect(
      w
        .events("p1")
        .filter((e) => e.hook_event_name === "UserPromptSubmit")
        .map((e) => e.prompt),
    ).toEqual(["MOCK_SLOW:0.5 from a"]);
    expect(
      w
        .events("p2")
        .filter((e) => e.hook_event_name === "UserPromptSubmit")
        .map((e) => e.prompt),
    ).toEqual(["MOCK_SLOW:0.5 from b"]);
    // Sends queue inside one session: each prompt is its own turn with its own result.
    const [q1, q2] = await Promise.all([a.send("first queued"), a.send("second queued")]);
    expect([q1.result, q2.result]).toEqual(["MOCK REPLY: first queued", "MOCK REPLY: second queued"]);
    expect(a.fold).toMatchObject({ turn_count: 3, prompts_submitted: 3, status: "idle" });
  });

  it("close ends the process: SessionEnd, then cs:exit; the status is dead", async () => {
    const t = await w.start("closing", "closing");
    const pid = t.pid!;
    const info = await t.close();
    expect(info.code).toBe(0);
    const names = hookNames(w.events("closing"));
    expect(names.slice(-2)).toEqual(["SessionEnd", "cs:exit"]);
    expect(t.fold.status).toBe("dead");
    expect(() => process.kill(pid, 0)).toThrow();
    await expect(t.send("too late")).rejects.toMatchObject({ code: "SESSION_DEAD" });
  });
});

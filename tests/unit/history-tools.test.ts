import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { costCommand, historyCommand, searchCommand, showCommand } from "../../src/cli/history.js";
import { ExecutionLog } from "../../src/history/executions.js";
import { History } from "../../src/history/history.js";
import * as api from "../../src/api/index.js";
import { HistoryService } from "../../src/history/service.js";
import { HISTORY_TOOLS } from "../../src/server/tools/history.js";
import { tempDirs, Transcript, type Dirs } from "../helpers/transcripts.js";

let dirs: Dirs;
interface HistoryDeps {
  history: History;
  executions: ExecutionLog;
  svc: HistoryService;
}
let deps: HistoryDeps | undefined;
afterEach(async () => {
  await deps?.history.close();
  await deps?.svc.close();
  deps?.executions.close();
  deps = undefined;
  dirs?.cleanup();
});

function setup(): HistoryDeps {
  dirs = tempDirs();
  deps = {
    history: new History({ stateDir: dirs.stateDir, configDir: dirs.configDir, mode: "inline", syncOnOpen: false }),
    executions: new ExecutionLog(dirs.stateDir),
    svc: new HistoryService({
      stateDir: dirs.stateDir,
      configDir: dirs.configDir,
      mode: "inline",
      syncOnOpen: false,
      managed: async () => new Map([["nope", "s-x"]]),
    }),
  };
  return deps;
}

describe("execution history", () => {
  it("records turns, lists them newest first per session, and clears without touching transcripts", () => {
    const d = setup();
    const t = new Transcript(dirs.configDir, "/w/x").turn("keep me", "kept");
    const before = readFileSync(t.path, "utf8");
    d.executions.record({
      session_id: "s1",
      prompt: "first",
      response: "one",
      started_at: "2026-03-01T10:00:00Z",
      ended_at: "2026-03-01T10:00:02.500Z",
      outcome: "completed",
    });
    d.executions.record({
      session_id: "s2",
      prompt: "other",
      started_at: new Date("2026-03-01T10:01:00Z"),
      ended_at: new Date("2026-03-01T10:01:01Z"),
      outcome: "interrupted",
    });
    const e3 = d.executions.record({
      session_id: "s1",
      claude_session_id: "c-1",
      prompt: "second",
      response: "two",
      started_at: "2026-03-01T10:02:00Z",
      ended_at: "2026-03-01T10:02:10Z",
      outcome: "failed",
      error: "API Error: 500",
      usage: {
        input_tokens: 1,
        output_tokens: 2,
        cache_creation_input_tokens: 0,
        cache_creation_5m_input_tokens: 0,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: 3,
      },
      cost_usd: 0.0001,
    });
    expect(e3).toMatchObject({
      duration_ms: 10_000,
      outcome: "failed",
      error: "API Error: 500",
      usage: { cache_read_input_tokens: 3 },
    });

    const all = d.svc.getExecutions(api.getExecutionsInput.parse({}));
    expect(all.executions.map((e) => e.prompt)).toEqual(["second", "other", "first"]);
    expect(all.total_count).toBe(3);
    const s1 = d.svc.getExecutions(api.getExecutionsInput.parse({ session_id: "s1", limit: 1 }));
    expect(s1.executions.map((e) => e.prompt)).toEqual(["second"]);
    expect(s1.total_count).toBe(2);
    expect(api.getExecutionsOutput.safeParse(all).success).toBe(true);

    expect(d.svc.clearExecutions(api.clearExecutionsInput.parse({ session_id: "s2" }))).toEqual({ cleared_count: 1 });
    expect(d.svc.clearExecutions(api.clearExecutionsInput.parse({}))).toEqual({ cleared_count: 2 });
    expect(d.executions.list().executions).toHaveLength(0);
    expect(readFileSync(t.path, "utf8")).toBe(before);
  });

  it("keeps records across a reopen (the store is a file under the state dir)", () => {
    const d = setup();
    d.executions.record({
      session_id: "s1",
      prompt: "p",
      started_at: "2026-03-01T10:00:00Z",
      ended_at: "2026-03-01T10:00:01Z",
      outcome: "completed",
    });
    d.executions.close();
    d.executions = new ExecutionLog(dirs.stateDir);
    expect(d.executions.list().executions.map((e) => e.prompt)).toEqual(["p"]);
  });
});

describe("tool definitions", () => {
  it("validate input strictly and produce output their schemas accept", async () => {
    const d = setup();
    new Transcript(dirs.configDir, "/w/t").turn("deploy the 配置文件 change", "deployed", {
      usage: { input_tokens: 10, output_tokens: 10 },
    });
    await d.svc.index.sync();
    expect(HISTORY_TOOLS.map((t) => t.name)).toEqual([
      "list_conversations",
      "get_conversation",
      "search_conversations",
      "get_execution_history",
      "clear_execution_history",
    ]);
    expect(api.listConversationsInput.safeParse({ limit: 0 }).success).toBe(false);
    expect(api.listConversationsInput.safeParse({ bogus: 1 }).success).toBe(false);
    const list = await d.svc.listConversations(api.listConversationsInput.parse({}));
    expect(api.listConversationsOutput.safeParse(list).success).toBe(true);
    const found = await d.svc.searchConversations(api.searchConversationsInput.parse({ query: "配置文件" }));
    expect(api.searchConversationsOutput.safeParse(found).success).toBe(true);
    expect(found.results).toHaveLength(1);
    const page = await d.svc.getConversation(
      api.getConversationInput.parse({ claude_session_id: found.results[0]!.claude_session_id }),
    );
    expect(api.getConversationOutput.safeParse(page).success).toBe(true);
  });
});

describe("CLI commands", () => {
  it("print history, search hits, a conversation and costs", async () => {
    const d = setup();
    const t = new Transcript(dirs.configDir, "/w/cli").turn("Explain the retry policy", "Retries back off exponentially.", {
      model: "claude-opus-4-6",
      usage: { input_tokens: 1_000_000, output_tokens: 0 },
    });
    new Transcript(dirs.configDir, "/w/cli2").turn("hello", "hi", {
      model: "claude-experimental-9",
      usage: { input_tokens: 5, output_tokens: 5 },
    });
    await d.history.sync();
    expect(historyCommand(d.history, [])).toContain("Explain the retry policy");
    expect(historyCommand(d.history, ["--cwd", "/w/none"])).toBe("no conversations");
    const s = searchCommand(d.history, ["retry", "policy"]);
    expect(s).toContain(t.sessionId);
    expect(s).toContain("**retry** **policy**");
    expect(showCommand(d.history, [t.sessionId])).toContain("Retries back off exponentially.");
    const cost = costCommand(d.history, ["--by", "model"]);
    expect(cost).toMatch(/claude-opus-4-6\s+1\s+1\.0M\s+0\s+\$5\.0000/);
    expect(cost).toMatch(/claude-experimental-9.*n\/a/);
    expect(cost).toContain("no price for claude-experimental-9");
    expect(() => costCommand(d.history, ["--by", "week"])).toThrow(/--by must be/);
  });
});

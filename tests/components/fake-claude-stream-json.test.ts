/**
 * The fake claude in the Agent SDK's mode (tests/fixtures/fake-claude/stream-json.mjs) against what the real CLI
 * 2.1.330 says under the SDK (tests/fixtures/fake-claude/stream-json-2.1.330.jsonl, captured): every message the
 * fake writes is of a kind the real CLI writes, with no field the real one lacks, and a session runs through
 * initialize, a turn, a permission request answered, an interrupt, an API error and EOF.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FAKE_CLAUDE, FIXTURES } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";

type Msg = Record<string, unknown> & { type: string };

function kindOf(m: Msg): string {
  const inner = (m.request ?? (m.response as Record<string, unknown> | undefined)?.response) as
    Record<string, unknown> | undefined;
  if (m.type === "control_request") return `control_request/${String(inner?.subtype)}`;
  if (m.type === "control_response")
    return `control_response/${inner && "commands" in inner ? "initialize" : inner && "still_queued" in inner ? "interrupt" : "other"}`;
  if (m.type === "system") return `system/${String(m.subtype)}`;
  if (m.type === "result") return `result/${String(m.subtype)}/${String(m.terminal_reason)}`;
  if (m.type === "user") {
    const c = (m.message as { content: unknown }).content;
    return typeof c === "string" ? "user/prompt" : `user/${String((c as Array<{ type: string }>)[0]?.type)}`;
  }
  return m.type;
}

const REAL = new Map(
  readFileSync(join(FIXTURES, "fake-claude", "stream-json-2.1.330.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { dir: string; kind: string; message: Msg })
    .filter((x) => x.dir === "out")
    .map((x) => [x.kind, x.message]),
);

/** Fields of `fake` (and of its request/response/message objects) the real message does not have. */
function extraFields(fake: Msg, real: Msg): string[] {
  const out = Object.keys(fake).filter((k) => !(k in real));
  for (const k of ["request", "message"] as const) {
    const f = fake[k] as Record<string, unknown> | undefined;
    const r = real[k] as Record<string, unknown> | undefined;
    if (f && r && typeof f === "object")
      out.push(
        ...Object.keys(f)
          .filter((x) => !(x in r))
          .map((x) => `${k}.${x}`),
      );
  }
  return out;
}

describe("fake claude, stream-json mode", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-fake-sj-")));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(home);
  mkdirSync(cwd);
  const settings = join(root, "settings.json");
  const hookLog = join(root, "hooks.jsonl");
  writeFileSync(
    settings,
    JSON.stringify({
      hooks: Object.fromEntries(
        [
          "SessionStart",
          "UserPromptSubmit",
          "PreToolUse",
          "PermissionRequest",
          "PostToolUse",
          "Stop",
          "StopFailure",
          "SessionEnd",
        ].map((e) => [e, [{ hooks: [{ type: "command", command: `cat >> '${hookLog}'; echo >> '${hookLog}'` }] }]]),
      ),
    }),
  );
  let child: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    child?.kill("SIGKILL");
    rmSync(root, { recursive: true, force: true });
  });

  it("runs a session as 2.1.330 does under the SDK, with the same kinds of message and no field the real CLI lacks", async () => {
    const id = "5a6666d8-2a52-44f2-8ca9-5e7ee6e8a27c";
    const p = spawn(
      process.execPath,
      [
        FAKE_CLAUDE,
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        "--permission-prompt-tool=stdio",
        "--permission-mode=default",
        `--session-id=${id}`,
        "--settings",
        settings,
      ],
      {
        cwd,
        env: { PATH: process.env.PATH ?? "", HOME: home },
      },
    );
    child = p;
    const got: Msg[] = [];
    let buf = "";
    p.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        got.push(JSON.parse(buf.slice(0, nl)) as Msg);
        buf = buf.slice(nl + 1);
      }
    });
    const exited = new Promise<number | null>((r) => p.on("exit", (code) => r(code)));
    const send = (m: unknown) => p.stdin.write(JSON.stringify(m) + "\n");
    const results = () => got.filter((m) => m.type === "result");
    const prompt = (text: string) => send({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null });

    send({ request_id: "init1", type: "control_request", request: { subtype: "initialize", systemPrompt: [""] } });
    prompt("hello there");
    await until(() => results().length === 1, 10_000, 10);
    expect(results()[0]).toMatchObject({
      subtype: "success",
      is_error: false,
      result: "FAKE REPLY: hello there",
      session_id: id,
      terminal_reason: "completed",
    });

    prompt("FAKE_BASH:touch ran.txt");
    const ask = await until(
      () =>
        got.find((m) => m.type === "control_request") as
          (Msg & { request_id: string; request: Record<string, unknown> }) | undefined,
      10_000,
      10,
    );
    expect(ask.request).toMatchObject({ subtype: "can_use_tool", tool_name: "Bash", input: { command: "touch ran.txt" } });
    send({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: ask.request_id,
        response: { behavior: "allow", updatedInput: { command: "touch ran.txt", description: "fake command" } },
      },
    });
    await until(() => results().length === 2, 10_000, 10);
    expect(results()[1]).toMatchObject({ subtype: "success", result: "FAKE: ran touch ran.txt" });
    expect(readFileSync(join(cwd, "ran.txt"), "utf8")).toBe("");

    prompt("FAKE_SLOW:20000 a long one");
    await until(() => got.filter((m) => kindOf(m) === "system/init").length === 3, 10_000, 10);
    send({ request_id: "int1", type: "control_request", request: { subtype: "interrupt" } });
    await until(() => results().length === 3, 10_000, 10);
    expect(results()[2]).toMatchObject({
      subtype: "error_during_execution",
      is_error: true,
      terminal_reason: "aborted_streaming",
    });

    prompt("FAKE_FAIL:500 overloaded");
    await until(() => results().length === 4, 10_000, 10);
    expect(results()[3]).toMatchObject({
      subtype: "success",
      is_error: true,
      result: "API Error: 500 overloaded",
      terminal_reason: "api_error",
    });
    // Running totals, as 2.1.330 reports them: the cost never goes down.
    const costs = results().map((r) => r.total_cost_usd as number);
    expect(costs).toEqual([...costs].sort((a, b) => a - b));
    expect(costs[0]).toBeGreaterThan(0);

    p.stdin.end();
    expect(await exited).toBe(0);
    const hooks = readFileSync(hookLog, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { hook_event_name: string }).hook_event_name);
    expect(hooks[0]).toBe("SessionStart");
    expect(hooks).toEqual(
      expect.arrayContaining(["UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "StopFailure"]),
    );
    expect(hooks.at(-1)).toBe("SessionEnd");

    const unknown = got.map(kindOf).filter((k) => !REAL.has(k));
    expect(unknown).toEqual([]);
    const extra = got.flatMap((m) => extraFields(m, REAL.get(kindOf(m))!).map((f) => `${kindOf(m)}: ${f}`));
    expect([...new Set(extra)]).toEqual([]);
  });
});

/**
 * The public surface, pinned: every tool's name, annotations and input and output JSON Schemas as tools/list
 * shows them. A change to a tool shows up here as a diff of tests/unit/__snapshots__/tools-list.json (update it
 * with `npx vitest run tests/unit/tools.test.ts -u` when the change is meant). The budget (issue 25): what
 * tools/list costs a client, measured as the JSON bytes of its result, for all toolsets and for core alone.
 */
import { describe, expect, it } from "vitest";
import { parseToolsets, TOOLSET_NAMES } from "../../src/config.js";
import { INSTRUCTIONS } from "../../src/server/instructions.js";
import { listTools } from "../../src/server/server.js";
import { KEY_RESULT_FIELDS } from "../../src/server/listing/listed-results.js";
import type { Mcp } from "../helpers/harness.js";
import { TOOLS as CLIENT_TOOLS } from "../helpers/tools.js";
import { TOOLS } from "../../src/server/tools/index.js";
import { TOOLSETS, toolsOf } from "../../src/server/toolsets.js";

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe("tools/list", () => {
  it("matches the pinned surface", async () => {
    await expect(JSON.stringify(listTools(), null, 2) + "\n").toMatchFileSnapshot("./__snapshots__/tools-list.json");
  });

  it("every tool has an object input and output schema, a title and its hints", () => {
    for (const t of listTools()) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema.type, t.name).toBe("object");
      expect(Object.keys(t.outputSchema.properties as object).length, t.name).toBeGreaterThan(0);
      expect(t.title, t.name).toBeTruthy();
      // Left out only where the MCP spec and Claude Code read the absence the same: readOnlyHint and idempotentHint
      // false; destructiveHint and idempotentHint of a read-only tool. destructiveHint and openWorldHint default
      // to true in the spec but Claude Code reads an absent one as false, so a tool that may write lists both.
      const a = t.annotations;
      expect(a.readOnlyHint ?? false, t.name).toBe(TOOLS.find((x) => x.name === t.name)!.annotations.readOnlyHint);
      expect(typeof a.openWorldHint, t.name).toBe("boolean");
      if (a.readOnlyHint !== true) expect(typeof a.destructiveHint, t.name).toBe("boolean");
      for (const h of ["readOnlyHint", "idempotentHint"]) expect(a[h], `${t.name} ${h}`).not.toBe(false);
    }
  });

  it("a result lists its required fields and key ones, stays open, and the tool says where the rest is", () => {
    const send = listTools(TOOLS.filter((t) => t.name === "send_message"))[0]!;
    const fields = Object.keys(send.outputSchema.properties as object);
    expect(fields).toEqual(
      expect.arrayContaining(["session_id", "message_sent", "final_state", "response", "pending_permission", "blocked"]),
    );
    expect(fields).not.toContain("session_cost_usd");
    expect(send.outputSchema.additionalProperties).toBeUndefined();
    // That the text copy has them all is said once, in the instructions (not in every tool's description).
    expect(send.description).not.toMatch(/text copy/);
    expect(INSTRUCTIONS).toMatch(/outputSchema lists its key fields, and the text copy has them all/);
    for (const [name, keys] of Object.entries(KEY_RESULT_FIELDS)) {
      const shape = (TOOLS.find((t) => t.name === name)!.output as unknown as { shape: Record<string, unknown> }).shape;
      for (const k of keys) expect(shape, `${name}.${k}`).toHaveProperty(k);
    }
  });

  it("the test client's table (tests/helpers/tools.ts) types exactly the tools the server lists, with their own schemas", () => {
    const listed = new Map(listTools().map((t) => [t.name, t]));
    expect(Object.keys(CLIENT_TOOLS).sort()).toEqual([...listed.keys()].sort());
    for (const [name, [input]] of Object.entries(CLIENT_TOOLS))
      expect(input.safeParse({ surely_not_an_argument: 1 }).success, name).toBe(false);
  });

  it("the whole surface fits in 32 KB of tools/list JSON", () => {
    expect(bytes({ tools: listTools(toolsOf(["all"])) })).toBeLessThanOrEqual(32 * 1024);
  });

  it("core alone fits in 12 KB", () => {
    expect(bytes({ tools: listTools(toolsOf(["core"])) })).toBeLessThanOrEqual(12 * 1024);
  });

  it("a field described once is not described again, and the tool says where it is", () => {
    const kill = listTools().find((t) => t.name === "kill_session")!;
    // Its type only (never {}, which accepts any value), and the tool names where it is described.
    expect((kill.inputSchema.properties as Record<string, unknown>).session_id).toEqual({ type: "string" });
    expect(kill.description).toMatch(/See resume_session\./);
    const resume = listTools().find((t) => t.name === "resume_session")!;
    const props = resume.inputSchema.properties as Record<string, unknown>;
    expect(props.permission_mode).toEqual({ type: "string" });
    expect(props.allowed_tools).toEqual({ type: "array" });
    expect(resume.description).toMatch(/See start_session\./);
    // Listed alone, a tool describes its own fields.
    const alone = listTools(TOOLS.filter((t) => t.name === "kill_session"))[0]!;
    expect((alone.inputSchema.properties as Record<string, { description?: string }>).session_id!.description).toBeTruthy();
    expect(alone.description).not.toMatch(/See /);
  });

  it("every property of every toolset's listing carries a type (no {} that accepts any value), and no type is a list", () => {
    const untyped: string[] = [];
    const walk = (n: unknown, path: string): void => {
      if (typeof n !== "object" || n === null || Array.isArray(n)) return;
      const o = n as Record<string, unknown>;
      if (!["type", "enum", "const", "anyOf", "properties"].some((k) => k in o)) untyped.push(path);
      if (Array.isArray(o.type)) untyped.push(`${path} (type list)`);
      for (const [p, v] of Object.entries((o.properties ?? {}) as object)) walk(v, `${path}.${p}`);
      if (o.items) walk(o.items, `${path}[]`);
      if (typeof o.additionalProperties === "object") walk(o.additionalProperties, `${path}{}`);
      if (Array.isArray(o.anyOf)) o.anyOf.forEach((x, i) => walk(x, `${path}|${i}`));
    };
    for (const set of TOOLSET_NAMES)
      for (const t of listTools(toolsOf([set])))
        (walk(t.inputSchema, `${set}:${t.name}<`), walk(t.outputSchema, `${set}:${t.name}>`));
    expect(untyped).toEqual([]);
  });

  it("a tool that takes every argument of an earlier one lists its own and names that tool", () => {
    const run = listTools().find((t) => t.name === "run_task")!;
    expect(Object.keys(run.inputSchema.properties as object).sort()).toEqual(["backend", "keep_session", "prompt", "timeout_ms"]);
    expect(run.inputSchema.required).toEqual(expect.arrayContaining(["cwd", "prompt"]));
    expect(run.inputSchema.additionalProperties).toBeUndefined();
    expect(run.description).toMatch(/Also every argument of start_session\./);
    const alone = listTools(TOOLS.filter((t) => t.name === "run_task"))[0]!;
    expect(alone.inputSchema.properties).toHaveProperty("cwd");
    expect(alone.description).not.toMatch(/Also every argument/);
  });
});

describe("toolsets", () => {
  it("every tool is in exactly one toolset", () => {
    const names = Object.values(TOOLSETS).flat();
    expect([...names].sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it("CLAUDE_SESSIONS_TOOLSETS picks the sets; unset means all; an unknown name stops the server", () => {
    expect(parseToolsets(undefined)).toEqual(["all"]);
    expect(parseToolsets(" core, history ")).toEqual(["core", "history"]);
    expect(toolsOf(parseToolsets("admin")).map((t) => t.name)).toEqual([
      "health_check",
      "configure",
      "move_session",
      "transfer_session",
    ]);
    expect(() => parseToolsets("core,kitchen")).toThrow(/unknown toolset "kitchen".*core, context, teams, history, admin/);
  });
});

/**
 * Compile-time checks of the typed client (`npm run typecheck`; never called): a wrong argument is a type error, the
 * data is the tool's output type, and callRaw takes anything on purpose.
 */
export async function typedClientChecks(m: Mcp): Promise<void> {
  // @ts-expect-error cwd is a string
  await m.callOk("start_session", { cwd: 42 });
  // @ts-expect-error no such tool
  await m.callOk("start_sessions", { cwd: "/" });
  // @ts-expect-error send_message needs a message (or a bash_mode line); `msg` is not an argument
  await m.callOk("send_message", { session_id: "x", msg: "hi" });
  const started = await m.callOk("start_session", { cwd: "/" });
  const id: string = started.session_id;
  // @ts-expect-error start_session's result has no `response`
  void started.response;
  const sent = await m.call("send_message", { session_id: id, message: "hi" });
  const reply: string | undefined = sent.data.response;
  void reply;
  await m.callRaw("start_session", { cwd: 42, unknown_option: true });
}

/**
 * The public surface, pinned: every tool's name, annotations and input and output JSON Schemas as tools/list
 * shows them. A change to a tool shows up here as a diff of tests/unit/__snapshots__/tools-list.json (update it
 * with `npx vitest run tests/unit/tools.test.ts -u` when the change is meant).
 */
import { describe, expect, it } from "vitest";
import { listTools } from "../../src/server/server.js";
import type { Mcp } from "../helpers/harness.js";
import { TOOLS } from "../helpers/tools.js";

describe("tools/list", () => {
  it("matches the pinned surface", async () => {
    await expect(JSON.stringify(listTools(), null, 2) + "\n").toMatchFileSnapshot("./__snapshots__/tools-list.json");
  });

  it("every tool has an object input and output schema, a title and honest hints", () => {
    for (const t of listTools()) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema.type, t.name).toBe("object");
      expect(t.title, t.name).toBeTruthy();
      expect(typeof t.annotations.readOnlyHint, t.name).toBe("boolean");
    }
  });

  it("the test client's table (tests/helpers/tools.ts) types exactly the tools the server lists, with their own schemas", () => {
    const listed = new Map(listTools().map((t) => [t.name, t]));
    expect(Object.keys(TOOLS).sort()).toEqual([...listed.keys()].sort());
    for (const [name, [input]] of Object.entries(TOOLS)) expect(input.safeParse({ surely_not_an_argument: 1 }).success, name).toBe(false);
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

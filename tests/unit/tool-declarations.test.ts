/**
 * Issue 35: a tool is one declaration. Its toolset and its route across nodes are in its defineTool call; the
 * toolsets' lists, the coordinator's routing and the test client's table are derived from the declarations (a new
 * tool needs no name added anywhere else).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sessionId, teamName } from "../../src/api/common.js";
import { groupOf } from "../../src/nodes/fanout.js";
import { keysOf } from "../../src/nodes/checks.js";
import { defineTool } from "../../src/server/tool.js";
import { TOOLS } from "../../src/server/tools/index.js";
import { MEMBER_TOOL_LIST } from "../../src/server/tools/member.js";
import { LEAD_TOOLS, MEMBER_TOOL_DEFS } from "../../src/api/members.js";
import { TOOLSETS, toolsOf } from "../../src/server/toolsets.js";
import { TOOLS as CLIENT_TOOLS } from "../helpers/tools.js";

/** A tool that exists only in this test: declared as any new tool is. */
const teamNote = defineTool({
  name: "team_note",
  title: "Note to a team",
  description: "A test tool.",
  input: z.strictObject({ team_name: teamName.optional(), session_ids: z.array(sessionId).optional(), note: z.string() }),
  output: z.object({ noted: z.number() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  toolset: "teams",
  route: "group",
  handler: async () => ({ noted: 0 }),
});

describe("a tool is one declaration (issue 35)", () => {
  it("the toolsets' lists are the declarations' toolsets, in the listing's order", () => {
    for (const [set, names] of Object.entries(TOOLSETS))
      expect(names, set).toEqual(TOOLS.filter((t) => t.toolset === set).map((t) => t.name));
    expect(TOOLSETS.core).toContain("start_session");
    expect(toolsOf(["teams"]).map((t) => t.name)).toEqual([
      "broadcast_message",
      "wait_for_sessions",
      "sync_context",
      "fan_out",
      "merge_worktree",
    ]);
  });

  it("the nodes route a call by the route its tool declares, not by its name", () => {
    // A new group tool fans out over a team or a list of ids with no name added to the nodes' code.
    expect(groupOf(teamNote, { team_name: "alpha", note: "x" })).toBe("team");
    expect(groupOf(teamNote, { session_ids: ["a"], note: "x" })).toBe("ids");
    expect(groupOf({ ...teamNote, route: "session" }, { team_name: "alpha", note: "x" })).toBeUndefined();
  });

  it("every declaration's route fits its arguments", () => {
    for (const t of TOOLS) {
      const k = keysOf(t.input);
      if (t.route === "placed") expect(k.has("node"), t.name).toBe(true);
      if (t.route === "session" || t.route === "wake" || t.route === "adopt") expect(k.has("session_id"), t.name).toBe(true);
      if (t.route === "group") expect(k.has("team_name") || k.has("session_ids"), t.name).toBe(true);
      // A tool that takes `node` is placed there, or finds the machine itself (history); schedule_task is stored on
      // this machine (local) and hands `node` to the run_task each of its runs is; move_session's `node` is where it goes.
      if (k.has("node") && t.name !== "schedule_task") expect(["placed", "history", "move"], t.name).toContain(t.route);
    }
  });

  it("the test client's table is derived from the declarations", () => {
    expect(Object.keys(CLIENT_TOOLS)).toEqual(TOOLS.map((t) => t.name));
    for (const t of TOOLS) expect(CLIENT_TOOLS[t.name as keyof typeof CLIENT_TOOLS], t.name).toEqual([t.input, t.output]);
  });

  it("member tools are declared the same way: toolset member, an authorize step, the lead's only for the lead", () => {
    expect(MEMBER_TOOL_LIST.map((t) => t.name).sort()).toEqual(Object.keys(MEMBER_TOOL_DEFS).sort());
    for (const t of MEMBER_TOOL_LIST) {
      expect(t.toolset, t.name).toBe("member");
      expect(t.authorize, t.name).toBeTypeOf("function");
      expect(t.input, t.name).toBe(MEMBER_TOOL_DEFS[t.name].input);
    }
    // None is offered in this server's tools/list (a member's own server lists them).
    expect(TOOLS.some((t) => t.toolset === "member")).toBe(false);
    expect(LEAD_TOOLS.length).toBe(2);
  });

  it("one function writes an audit line: nothing in src/ but AuditLog.record appends to the audit log", () => {
    const SRC = resolve(import.meta.dirname, "../../src");
    const files = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(d, e.name)) : e.name.endsWith(".ts") ? [join(d, e.name)] : [],
      );
    const writers = files(SRC)
      .filter((f) => /audit\.append\(/.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(writers).toEqual([]);
  });
});

/** The server's instructions name every tool it lists (a new tool without a word there fails here). */
import { describe, expect, it } from "vitest";
import { INSTRUCTIONS, instructionsFor } from "../../src/server/instructions.js";
import { promptsFor } from "../../src/server/mcp/prompts.js";
import { TOOLS } from "../../src/server/tools/index.js";
import { TOOLSETS, toolsOf } from "../../src/server/toolsets.js";

describe("server instructions", () => {
  it("name every tool of tools/list", () => {
    expect(TOOLS.map((t) => t.name).filter((n) => !new RegExp(`\\b${n}\\b`).test(INSTRUCTIONS))).toEqual([]);
  });

  it("with some toolsets, name only the tools offered, and keep every offered tool named", () => {
    const all = TOOLS.map((t) => t.name);
    for (const sets of [["core"], ["history", "admin"], ["core", "teams"]] as const) {
      const offered = new Set(toolsOf(sets).map((t) => t.name));
      const text = instructionsFor(offered, all);
      expect(all.filter((n) => new RegExp(`\\b${n}\\b`).test(text)).sort(), sets.join()).toEqual([...offered].sort());
    }
  });
});

describe("prompts follow the toolsets", () => {
  it("review_team needs the teams tools; start_task and handoff come with core", () => {
    expect(promptsFor(new Set(TOOLSETS.core)).map((p) => p.name)).toEqual(["start_task", "handoff"]);
    expect(promptsFor(new Set([...TOOLSETS.core, ...TOOLSETS.teams])).map((p) => p.name)).toEqual([
      "start_task",
      "handoff",
      "review_team",
    ]);
  });
});

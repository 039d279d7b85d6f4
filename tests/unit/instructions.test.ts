/** The server's instructions name every tool it lists (a new tool without a word there fails here). */
import { describe, expect, it } from "vitest";
import { INSTRUCTIONS } from "../../src/server/instructions.js";
import { TOOLS } from "../../src/server/tools/index.js";

describe("server instructions", () => {
  it("name every tool of tools/list", () => {
    expect(TOOLS.map((t) => t.name).filter((n) => !new RegExp(`\\b${n}\\b`).test(INSTRUCTIONS))).toEqual([]);
  });
});

/**
 * The public surface, pinned: every tool's name, annotations and input and output JSON Schemas as tools/list
 * shows them. A change to a tool shows up here as a diff of tests/unit/__snapshots__/tools-list.json (update it
 * with `npx vitest run tests/unit/tools.test.ts -u` when the change is meant).
 */
import { describe, expect, it } from "vitest";
import { listTools } from "../../src/server/server.js";

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
});

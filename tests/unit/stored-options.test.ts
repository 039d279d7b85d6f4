/** The record's launch options: one typed schema (src/store/options.ts), and state files of the previous version load. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { headlessOptionsOf } from "../../src/runners/headless/stored.js";
import { pickClaudeOptions } from "../../src/sessions/launch/options.js";
import { StoredOptionsSchema } from "../../src/store/options.js";
import { parseState } from "../../src/store/parse.js";

const PREVIOUS = readFileSync(join(import.meta.dirname, "../fixtures/state/previous-version.json"), "utf8");

describe("stored launch options", () => {
  it("a state.json of the previous version loads whole: every record, known options typed, unknown ones dropped", () => {
    const { state, bad } = parseState(PREVIOUS);
    expect(bad).toEqual([]);
    expect(Object.keys(state.sessions).sort()).toEqual(["b0a1b2c3d4", "h0a1b2c3d4", "t0a1b2c3d4"]);
    const t = state.sessions.t0a1b2c3d4!.options;
    expect(t).toEqual({
      model: "sonnet",
      permission_mode: "acceptEdits",
      add_dirs: ["/work/lib"],
      allowed_tools: ["Read", "Bash(git:*)"],
      trust_workspace: true,
      start_fingerprint: "3f1a9c",
    });
    expect(pickClaudeOptions(t)).toEqual({
      model: "sonnet",
      permission_mode: "acceptEdits",
      add_dirs: ["/work/lib"],
      allowed_tools: ["Read", "Bash(git:*)"],
    });
    const h = state.sessions.h0a1b2c3d4!.options;
    expect(h).not.toHaveProperty("an_option_of_a_later_version");
    // effort was an option of a later version once; this version knows it (issue 31) and keeps it typed.
    expect(h.effort).toBe("high");
    expect(headlessOptionsOf(h)).toEqual({
      permission_mode: "default",
      append_system_prompt: "be brief",
      max_turns: 4,
      max_budget_usd: 0.5,
      system_prompt: "",
      fallback_model: "haiku",
      strict_mcp_config: true,
      setting_sources: ["project"],
      output_schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
      effort: "high",
    });
  });

  it("an option of the wrong shape is dropped, never the record", () => {
    const { state, bad } = parseState(PREVIOUS);
    expect(bad).toEqual([]);
    const o = state.sessions.b0a1b2c3d4!.options;
    expect(JSON.parse(JSON.stringify(o))).toEqual({ model: "opus" });
    expect(
      headlessOptionsOf(StoredOptionsSchema.parse({ permission_mode: "root", max_turns: "3", strict_mcp_config: "yes" })),
    ).toEqual({});
  });
});

/** The CLI's own text: ls lines (node and cost) and the progress line. */
import { describe, expect, it } from "vitest";
import type * as api from "../../src/api/index.js";
import { lsLines } from "../../src/cli/ls.js";
import { progressText } from "../../src/cli/progress.js";

const row = (o: Partial<api.ListOutput["sessions"][number]>) =>
  ({
    session_id: "abc",
    claude_session_id: "c",
    status: "idle",
    backend: "tmux",
    survives_restart: true,
    cwd: "/w",
    created_at: "t",
    turn_count: 1,
    ...o,
  }) as api.ListOutput["sessions"][number];

describe("ls lines", () => {
  it("name the node and the cost: dollars, a question mark for an unknown price, a dash for none yet", () => {
    const res = {
      sessions: [
        row({ total_cost_usd: 1.234 }),
        row({ session_id: "b", total_cost_usd: null, node: "gpu", node_status: "unreachable" }),
        row({ session_id: "c", total_cost_usd: 0.0004 }),
        row({ session_id: "d" }),
      ],
      total_count: 4,
      filtered_count: 4,
    };
    expect(lsLines(res, false)).toEqual([
      "local\tabc\tidle\ttmux\t$1.23\t/w\t",
      "gpu (unreachable)\tb\tidle\ttmux\t?\t/w\t",
      "local\tc\tidle\ttmux\t$0.0004\t/w\t",
      "local\td\tidle\ttmux\t-\t/w\t",
    ]);
    expect(lsLines(res, true)[0]).toBe("NODE\tSESSION\tSTATUS\tBACKEND\tCOST\tCWD\tATTACH");
    expect(lsLines({ sessions: [], total_count: 0, filtered_count: 0 }, true)).toEqual(["no sessions"]);
  });
});

describe("the progress line", () => {
  it("shows the session, its status, the elapsed time and the tokens so far", () => {
    const usage = {
      input_tokens: 10,
      output_tokens: 1500,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 20_000,
      cache_creation_5m_input_tokens: 0,
      cache_creation_1h_input_tokens: 0,
    };
    expect(progressText({ frame: 0, session: "abc", status: "busy", ms: 75_400, usage })).toBe(
      "⠋ abc busy · 1m15s · 21.5k tokens (1.5k out)",
    );
    expect(
      progressText({
        frame: 1,
        ms: 900,
        usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          cache_creation_5m_input_tokens: 0,
          cache_creation_1h_input_tokens: 0,
        },
      }),
    ).toBe("⠙ starting … · 0s · 0 tokens (0 out)");
  });
});

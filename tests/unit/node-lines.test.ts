import { describe, expect, it } from "vitest";
import { formatNodeLine } from "../../src/cli/nodes.js";

describe("`claude-sessions nodes` lines", () => {
  it("name each node's version and say which differ from this machine's", () => {
    const same = { name: "h1", status: "reachable" as const, version: "1.4.0", health: "ok", live: 2, max: 30 };
    expect(formatNodeLine(same, "1.4.0")).toBe("h1\treachable\tclaude-sessions 1.4.0\thealth ok\t2 live of 30");
    expect(formatNodeLine({ ...same, name: "h2", version: "1.3.9" }, "1.4.0")).toBe(
      "h2\treachable\tclaude-sessions 1.3.9\thealth ok\t2 live of 30\tversion differs from this machine's 1.4.0",
    );
    expect(formatNodeLine({ ...same, version: undefined }, "1.4.0")).toMatch(/claude-sessions \?.*version differs/);
    expect(formatNodeLine({ name: "h3", status: "unreachable", error: "no route\u001b[2J" }, "1.4.0")).not.toContain("\u001b");
  });
});

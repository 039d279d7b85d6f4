import { describe, expect, it } from "vitest";
import { backoff, DEFAULT_TIMINGS } from "../../src/nodes/link.js";

describe("a link's reconnection back-off", () => {
  it("doubles from its minimum up to its maximum, each wait jittered between half and all of it", () => {
    const t = DEFAULT_TIMINGS;
    expect([0, 1, 2, 3, 4, 50].map((a) => backoff(t, a, () => 1))).toEqual([250, 500, 1000, 1000, 1000, 1000]);
    expect([0, 3, 50].map((a) => backoff(t, a, () => 0))).toEqual([125, 500, 500]);
    // Ten nodes coming back at once do not all retry in the same instant.
    const waits = new Set(Array.from({ length: 10 }, () => backoff(t, 5)));
    expect(waits.size).toBeGreaterThan(5);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(500);
    // A node whose link returns gets its next attempt within a second (it has 5 s to answer again).
    expect(Math.max(...waits)).toBeLessThanOrEqual(1000);
  });
});

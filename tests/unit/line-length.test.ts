/** House rule (issue 35): Prettier formats src/ at 130 columns; what it cannot break (strings, comments) stays ≤ 160. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });

describe("src/ lines", () => {
  it("none is over 160 characters", () => {
    const long = files(SRC).flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .flatMap((l, i) => (l.length > 160 ? [`${relative(SRC, f)}:${i + 1} (${l.length})`] : [])),
    );
    expect(long).toEqual([]);
  });
});

/** `npm install` on an old Node stops at once, naming the way out (scripts/check-node.cjs runs as preinstall). */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const { check } = createRequire(import.meta.url)(join(ROOT, "scripts", "check-node.cjs")) as { check: (v: string) => string | null };

describe("preinstall node check", () => {
  it("refuses Debian's Node 20 and 22 before 22.22 with the command that fixes it; accepts 22.22+ and 24", () => {
    for (const v of ["20.20.2", "22.21.0", "23.11.0"]) expect(check(v), v).toContain("source scripts/node24.sh && npm install");
    for (const v of ["22.22.0", "24.21.0", "25.1.0"]) expect(check(v), v).toBeNull();
  });

  it("is the first thing npm install runs", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string>; files: string[] };
    expect(pkg.scripts.preinstall).toBe("node scripts/check-node.cjs");
    expect(pkg.files).toContain("scripts/check-node.cjs");
  });
});

/** The preinstall step (scripts/node24.cjs): which Node versions it sets Node 24 up for, and that npm runs it first. */
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const { tooOld, isDependency } = createRequire(import.meta.url)(join(ROOT, "scripts", "node24.cjs")) as {
  tooOld: (v: string) => boolean;
  isDependency: (root: string) => boolean;
};

describe("preinstall Node 24 set-up", () => {
  it("acts on Debian's Node 20 and 22 before 22.22; leaves 22.22+, 24 and newer alone", () => {
    for (const v of ["20.20.2", "18.19.1", "22.21.0", "23.11.0"]) expect(tooOld(v), v).toBe(true);
    for (const v of ["22.22.0", "24.21.0", "25.1.0", "26.0.0"]) expect(tooOld(v), v).toBe(false);
  });

  it("tells a clone being set up from a copy installed as someone's dependency", () => {
    expect(isDependency("/home/me/claude-sessions")).toBe(false);
    expect(isDependency("/home/me/app/node_modules/claude-sessions")).toBe(true);
    expect(isDependency("/usr/lib/node_modules/claude-sessions")).toBe(true);
  });

  it("is the first script of npm install, and ships in the package", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
      files: string[];
    };
    expect(pkg.scripts.preinstall).toBe("node scripts/node24.cjs");
    expect(pkg.files).toContain("scripts/node24.cjs");
  });
});

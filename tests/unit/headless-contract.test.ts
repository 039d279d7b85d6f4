/**
 * Every case of the contract suites (describe.each over the backends) says how it stands for headless
 * sessions: the headless test that covers it, or why it does not apply (tests/helpers/headless-contract.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { HEADLESS_CONTRACT } from "../helpers/headless-contract.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** Test names of a file's describe.each(BACKENDS) block (the contract cases). */
function contractCases(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const start = text.indexOf("describe.each(BACKENDS)");
  if (start < 0) return [];
  const body = text.slice(start).split(/\n\}\);\n/)[0]!;
  return [...body.matchAll(/\n {2}it\("((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
}

function testNames(file: string): string[] {
  return [...readFileSync(join(ROOT, file), "utf8").matchAll(/\n\s+it\("((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
}

describe("headless side of the contract suites", () => {
  const files = ["tests/integration", "tests/e2e"].flatMap((d) => readdirSync(join(ROOT, d)).filter((f) => f.endsWith(".test.ts")).map((f) => join(ROOT, d, f)));
  const cases = files.flatMap(contractCases);

  it("every contract case says which headless test covers it or why it does not apply", () => {
    expect(cases.length).toBeGreaterThan(20);
    expect(cases.filter((c) => !(c in HEADLESS_CONTRACT))).toEqual([]);
    expect(Object.keys(HEADLESS_CONTRACT).filter((c) => !cases.includes(c))).toEqual([]);
  });

  it("every headless test named there exists", () => {
    const missing: string[] = [];
    for (const c of Object.values(HEADLESS_CONTRACT)) {
      if (!("covered_by" in c)) continue;
      for (const [file, name] of c.covered_by) if (!testNames(file).includes(name)) missing.push(`${file}: ${name}`);
    }
    expect(missing).toEqual([]);
  });
});

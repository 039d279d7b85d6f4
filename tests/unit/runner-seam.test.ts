/**
 * The session layer and the server see runners through their interfaces only (issue 35): nothing of
 * runners/terminal is imported there, and no runner kind is named but in the one default-kind choice.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
const scanned = [...files(join(SRC, "sessions")), ...files(join(SRC, "server")), join(SRC, "config.ts")];

describe("the runner seam", () => {
  it("sessions/ and server/ import nothing from runners/terminal", () => {
    const hits = scanned
      .filter((f) => /from\s+["'][^"']*runners\/terminal\//.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(hits).toEqual([]);
  });

  it('names a runner kind ("tmux", "pty", "headless") only where the default kind is chosen', () => {
    const hits: string[] = [];
    for (const f of scanned) {
      readFileSync(f, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/"(tmux|pty|headless)"/.test(line) && !/defaultKind:/.test(line)) hits.push(`${relative(SRC, f)}:${i + 1}`);
        });
    }
    expect(hits).toEqual([]);
  });
});

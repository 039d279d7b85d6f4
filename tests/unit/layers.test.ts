/**
 * Dependencies point one way. Every module of src/ belongs to a layer; it may import modules of its own folder
 * and of lower layers only. Units of one layer (store, claude, events, config.ts) do not import each other.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

/** Layer of a module, by its folder under src/ (or its file name for the few files at the top). */
const LAYERS: Record<string, number> = {
  core: 0,
  util: 1,
  "config.ts": 2,
  store: 2,
  claude: 2,
  events: 2,
  // The sandbox's pure parts (hosts, spec, dependencies) and the launcher that runs in a session's place.
  sandbox: 2,
  api: 3,
  "price-file.ts": 2,
  "pricing.ts": 3,
  // Where a session runs and how its conversation is held: tmux/pty hosts and the terminal driver, the headless engine.
  runners: 4,
  history: 4,
  sessions: 5,
  server: 6,
  // The coordinator of other machines: above the server's tool seam (it routes Tool calls), below the composition root.
  nodes: 6.5,
  "app.ts": 7,
  // The human commands (start, run, resume, ls…): over the composition root, under the entry point that dispatches.
  cli: 7.5,
  "command-line.ts": 8,
  "bin.ts": 9,
};

function unitOf(file: string): string {
  return relative(SRC, file).split("/")[0]!;
}

/** Why `from` may not import `to`, or undefined when it may. */
export function violation(from: string, to: string): string | undefined {
  const a = unitOf(from);
  const b = unitOf(to);
  if (a === b) return undefined;
  const la = LAYERS[a];
  const lb = LAYERS[b];
  if (la === undefined) return `${a} has no layer (add it to LAYERS)`;
  if (lb === undefined) return `${b} has no layer (add it to LAYERS)`;
  if (lb < la) return undefined;
  return lb === la ? `${a} and ${b} are one layer (${la}) and must not import each other` : `${a} (layer ${la}) imports ${b} (layer ${lb}), which is above it`;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^;]*?from\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g)) {
    const spec = m[1] ?? m[2]!;
    out.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
  }
  return out;
}

describe("import direction", () => {
  it("the rule catches an upward import and a sibling import", () => {
    expect(violation(join(SRC, "runners/terminal/tmux.ts"), join(SRC, "sessions/registry.ts"))).toMatch(/above it/);
    expect(violation(join(SRC, "runners/terminal/tmux.ts"), join(SRC, "history/history.ts"))).toMatch(/one layer/);
    expect(violation(join(SRC, "store/store.ts"), join(SRC, "claude/launch.ts"))).toMatch(/one layer/);
    expect(violation(join(SRC, "runners/headless/session.ts"), join(SRC, "claude/launch.ts"))).toBeUndefined();
    expect(violation(join(SRC, "sessions/kill.ts"), join(SRC, "core/errors.ts"))).toBeUndefined();
  });

  it("no module of src/ imports upward or sideways", () => {
    const bad: string[] = [];
    const all = files(SRC);
    expect(all.length).toBeGreaterThan(30);
    for (const f of all) for (const to of imports(f)) {
      const why = violation(f, to);
      if (why) bad.push(`${relative(SRC, f)} → ${relative(SRC, to)}: ${why}`);
    }
    expect(bad).toEqual([]);
  });
});

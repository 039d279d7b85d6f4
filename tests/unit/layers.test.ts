/**
 * Dependencies point one way. Every module of src/ belongs to a layer; it may import modules of its own folder
 * and of lower layers only. Units of one layer (store, claude, events, config.ts) do not import each other.
 * Inside sessions/ the rooms have sub-layers of their own (SESSION_LAYERS), and no module of src/ is on a circle of
 * value imports (an `import type` is erased at build and ties nothing at run time).
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
  // Schedules and webhooks out (issue 37): over the session layer's change feed; a task is run through a function
  // the serving command gives them (the same call path as run_task), so the server's tools can name schedules.
  automations: 5.5,
  server: 6,
  // The coordinator of other machines: above the server's tool seam (it routes Tool calls), below the composition root.
  nodes: 6.5,
  "app.ts": 7,
  // The human commands (start, run, resume, ls…): over the composition root, under the entry point that dispatches.
  cli: 7.5,
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
  return lb === la
    ? `${a} and ${b} are one layer (${la}) and must not import each other`
    : `${a} (layer ${la}) imports ${b} (layer ${lb}), which is above it`;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/**
 * Sub-layers of sessions/, by path under it (the longest entry that starts the path wins). A module may import, by
 * value, modules of its own sub-layer or lower ones only. Type-only imports are free: deps.ts names every part's type.
 */
export const SESSION_LAYERS: Record<string, number> = {
  // The rules: pure checks of a start's arguments and the shared bag of parts.
  "deps.ts": 1,
  "audit.ts": 1,
  "gates.ts": 1,
  "checks.ts": 1,
  "deadline.ts": 1,
  "launch/confine.ts": 1,
  "launch/options.ts": 1,
  "launch/roots.ts": 1,
  "launch/sandbox.ts": 1,
  "launch/worktree.ts": 1,
  "teams/members.ts": 1,
  "teams/context-sync.ts": 1,
  // What a session has spent: read from transcripts, summed, judged against budgets and pools.
  "spend/": 2,
  // The session object, the registry that follows it, and how it is shown.
  "session.ts": 3,
  "registry.ts": 3,
  "views.ts": 3,
  "output.ts": 3,
  "teams/team.ts": 3,
  // The session's keys (send lock, one delivery), control in a turn, the held prompts; ending a process.
  "turn/keys.ts": 4,
  "turn/control.ts": 4,
  "turn/queue.ts": 4,
  "life/kill.ts": 4,
  // Its life: sleep, room under MAX_LIVE, the limits and watches that end, interrupt or hibernate it.
  "life/": 5,
  // Launching it: start, resume, adoption, spares, and the wake (a wake is a relaunch).
  "launch/": 6,
  // Moving a hibernated session between machines: hibernates it (life/), under its send lock (turn/keys.ts).
  "move/": 6,
  // A turn (send, wait): it may wake the session first.
  "turn/": 7,
  // What uses turns and launches: teams, run_task, the listing.
  "teams/": 8,
  "list.ts": 8,
  "native.ts": 8,
  "run-task.ts": 8,
  // Parallel attempts (fan_out, checks, ranking) and the merge queue: over launches and turns, through the service's doors.
  "attempts/": 8,
  // Parked at a usage limit, woken once after it (it hibernates, then sends the prompt again).
  "limit/": 8,
  // The one door.
  "service.ts": 9,
};

const SESSIONS = join(SRC, "sessions");

function sessionLayer(file: string): number | undefined {
  const rel = relative(SESSIONS, file);
  let best: string | undefined;
  for (const k of Object.keys(SESSION_LAYERS))
    if ((rel === k || (k.endsWith("/") && rel.startsWith(k))) && (best === undefined || k.length > best.length)) best = k;
  return best === undefined ? undefined : SESSION_LAYERS[best];
}

/** Why `from` may not import `to` by value inside sessions/, or undefined when it may (or either is outside). */
export function sessionViolation(from: string, to: string): string | undefined {
  if (unitOf(from) !== "sessions" || unitOf(to) !== "sessions") return undefined;
  const la = sessionLayer(from);
  const lb = sessionLayer(to);
  const a = relative(SESSIONS, from);
  const b = relative(SESSIONS, to);
  if (la === undefined) return `sessions/${a} has no sub-layer (add it to SESSION_LAYERS)`;
  if (lb === undefined) return `sessions/${b} has no sub-layer (add it to SESSION_LAYERS)`;
  return lb > la ? `sessions/${a} (sub-layer ${la}) imports sessions/${b} (sub-layer ${lb}), which is above it` : undefined;
}

/** The modules a file imports by value (an `import type`, or braces of `type` names only, are left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+([^;]*?)\s+from\s+"(\.[^"]+)"/g)) {
    const clause = m[1]!;
    if (/^type\b/.test(clause)) continue;
    const names = /^\{([\s\S]*)\}$/.exec(clause)?.[1];
    if (
      names !== undefined &&
      names
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean)
        .every((n) => n.startsWith("type "))
    )
      continue;
    out.push(resolve(dirname(file), m[2]!.replace(/\.js$/, ".ts")));
  }
  for (const m of text.matchAll(/import\(\s*"(\.[^"]+)"\s*\)/g)) out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts")));
  return out;
}

/** The circles of a graph: its strongly connected parts of more than one module (Tarjan). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      part.push(w);
    } while (w !== v);
    if (part.length > 1) out.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
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
    expect(violation(join(SRC, "runners/terminal/tmux/tmux.ts"), join(SRC, "sessions/registry.ts"))).toMatch(/above it/);
    expect(violation(join(SRC, "runners/terminal/tmux/tmux.ts"), join(SRC, "history/history.ts"))).toMatch(/one layer/);
    expect(violation(join(SRC, "store/store.ts"), join(SRC, "claude/launch.ts"))).toMatch(/one layer/);
    expect(violation(join(SRC, "runners/headless/session.ts"), join(SRC, "claude/launch.ts"))).toBeUndefined();
    expect(violation(join(SRC, "sessions/life/kill.ts"), join(SRC, "core/errors.ts"))).toBeUndefined();
  });

  it("no module of src/ imports upward or sideways", () => {
    const bad: string[] = [];
    const all = files(SRC);
    expect(all.length).toBeGreaterThan(30);
    for (const f of all)
      for (const to of imports(f)) {
        const why = violation(f, to);
        if (why) bad.push(`${relative(SRC, f)} → ${relative(SRC, to)}: ${why}`);
      }
    expect(bad).toEqual([]);
  });
});

describe("sessions/ in rooms", () => {
  const at = (p: string) => join(SESSIONS, p);

  it("the rule catches an import up the sub-layers and lets one down through", () => {
    expect(sessionViolation(at("turn/keys.ts"), at("launch/wake.ts"))).toMatch(/above it/);
    expect(sessionViolation(at("life/sleep.ts"), at("launch/resume.ts"))).toMatch(/above it/);
    expect(sessionViolation(at("spend/totals.ts"), at("spend/budget.ts"))).toBeUndefined();
    expect(sessionViolation(at("launch/wake.ts"), at("life/room.ts"))).toBeUndefined();
    expect(sessionViolation(at("turn/send.ts"), at("launch/wake.ts"))).toBeUndefined();
    expect(sessionViolation(at("new-file.ts"), at("views.ts"))).toMatch(/no sub-layer/);
  });

  it("no module of sessions/ imports a higher sub-layer by value", () => {
    const bad: string[] = [];
    const all = files(SESSIONS);
    for (const f of all) {
      const own = sessionViolation(f, f);
      if (own) bad.push(own);
      for (const to of valueImports(f)) {
        const why = sessionViolation(f, to);
        if (why) bad.push(why);
      }
    }
    expect(bad).toEqual([]);
  });

  it("no folder of src/ holds more than 15 modules", () => {
    const count = new Map<string, number>();
    for (const f of files(SRC)) count.set(dirname(f), (count.get(dirname(f)) ?? 0) + 1);
    expect([...count.keys()].filter((d) => d.startsWith(SESSIONS)).length).toBeGreaterThan(4);
    const big = [...count].filter(([, n]) => n > 15).map(([d]) => relative(SRC, d));
    expect(big).toEqual([]);
  });
});

describe("no circle of value imports", () => {
  it("the search finds a circle and only a circle", () => {
    const g = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(circles(g)).toEqual([["a", "b", "c"]]);
    expect(
      circles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("no module of src/ is on a circle of value imports (type-only imports aside)", () => {
    const all = files(SRC);
    const graph = new Map(all.map((f) => [f, valueImports(f)]));
    expect(circles(graph).map((c) => c.map((f) => relative(SRC, f)).join(" → "))).toEqual([]);
  });
});

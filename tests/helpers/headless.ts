/**
 * The headless engine against the real Claude Code CLI, offline: one mock of the Messages API, one
 * prepared HOME and one state dir per test file (all under a temp dir), sessions started through
 * HeadlessSession with their own events.jsonl and settings.json as the orchestrator lays them out.
 *
 * Needs no tmux. Without a working CLI the suite is skipped with one loud line (on CI it fails).
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installScripts } from "../../src/app.js";
import type { ScriptPaths } from "../../src/claude/scripts.js";
import { HeadlessSession } from "../../src/runners/headless/session.js";
import type { HeadlessOptions } from "../../src/runners/headless/types.js";
import { parseEventLine, type LogEvent } from "../../src/events/reducer.js";
import { LiveSession } from "../../src/events/live.js";
import { prepareClaudeHome } from "../fixtures/claude-home.js";
import { startMockApi, type MockApi, type RecordedRequest } from "../fixtures/mock-anthropic.js";
import { API_KEY, REAL_CLAUDE, realClaudeVersion } from "./real-claude.js";

export function headlessCliOrSkip(): boolean {
  if (realClaudeVersion()) return true;
  const why = `the real claude CLI at ${REAL_CLAUDE} does not run (npm ci installs @anthropic-ai/claude-code; with --ignore-scripts its binary is a stub)`;
  if (process.env.CI) throw new Error(why);
  console.warn(`\n*** ${why}: SKIPPING the headless suite. ***\n`);
  return false;
}

export interface HeadlessWorld {
  mock: MockApi;
  root: string;
  home: string;
  stateDir: string;
  scripts: ScriptPaths;
  /** The offline block (HOME, API key, base URL, proxies). */
  env: Record<string, string>;
  /** A directory declared (and trusted) in headlessWorld({dirs}). */
  dir(name: string): string;
  /** Starts a session whose record is `id` (events in <state>/<id>/). */
  start(id: string, cwdName: string, o?: Partial<Omit<HeadlessOptions, "live">>): Promise<HeadlessSession>;
  eventsPath(id: string): string;
  events(id: string): LogEvent[];
  /** Main requests that arrived from index `from` on. */
  mainSince(from: number): RecordedRequest[];
  cleanup(): Promise<void>;
}

export async function headlessWorld(opts: { dirs: string[] }): Promise<HeadlessWorld> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-headless-")));
  const home = join(root, "home");
  const stateDir = join(root, "state");
  const dirs = new Map<string, string>();
  for (const n of opts.dirs) {
    const d = join(root, "work", n);
    mkdirSync(d, { recursive: true });
    dirs.set(n, d);
  }
  const mock = await startMockApi({ verbose: Boolean(process.env.CS_E2E_VERBOSE) });
  const prepared = await prepareClaudeHome({
    home,
    apiKey: API_KEY,
    trustedDirs: [...dirs.values()],
    mockUrl: mock.url,
    cliVersion: realClaudeVersion() ?? "2.1.330",
  });
  const scripts = await installScripts(stateDir);
  const sessions: HeadlessSession[] = [];
  const lives: LiveSession[] = [];
  const eventsPath = (id: string) => join(stateDir, id, "events.jsonl");
  const dir = (name: string) => {
    const d = dirs.get(name);
    if (!d) throw new Error(`headless: directory ${name} was not declared in headlessWorld({dirs})`);
    return d;
  };
  return {
    mock,
    root,
    home,
    stateDir,
    scripts,
    env: prepared.env,
    dir,
    eventsPath,
    async start(id, cwdName, o = {}) {
      mkdirSync(join(stateDir, id), { recursive: true, mode: 0o700 });
      // The engine runs on a fold it is given (the session layer's, in the server): here, one of the test's own.
      writeFileSync(eventsPath(id), "", { flag: "a", mode: 0o600 });
      const live = new LiveSession(
        id,
        eventsPath(id),
        () => {},
        () => {},
      );
      lives.push(live);
      await live.start();
      const s = await HeadlessSession.start({
        live,
        cwd: dir(cwdName),
        claude_path: REAL_CLAUDE,
        events_path: eventsPath(id),
        settings_path: join(stateDir, id, "settings.json"),
        // Only PATH from this process: HOME and everything else come from the prepared offline block.
        base_env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" },
        env: prepared.env,
        permission_mode: "default",
        ...o,
      });
      sessions.push(s);
      return s;
    },
    events(id) {
      return readFileSync(eventsPath(id), "utf8")
        .split("\n")
        .map(parseEventLine)
        .filter((e): e is LogEvent => e !== undefined);
    },
    mainSince(from) {
      return mock.requests.slice(from).filter((r) => !r.isSideRequest);
    },
    async cleanup() {
      await Promise.all(sessions.map((s) => s.close(3000).catch(() => {})));
      for (const l of lives) l.close();
      await mock.close();
      rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

export function hookNames(events: LogEvent[]): string[] {
  return events.map((e) => e.hook_event_name);
}

/**
 * The real Claude Code CLI, offline: a local mock of the Messages API, a prepared HOME, and the built
 * server pointed at the real binary. Used by tests/e2e.
 *
 * The binary is `<repo>/node_modules/.bin/claude` (the pinned devDependency) unless CLAUDE_PATH is set
 * in the test process's environment, so the same suite runs against any other version:
 *   CLAUDE_PATH=/tmp/cc-2.1.197/node_modules/.bin/claude npx vitest run tests/e2e
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { prepareClaudeHome } from "../fixtures/claude-home.js";
import { startMockApi, type MockApi, type RecordedRequest } from "../fixtures/mock-anthropic.js";
import { connect, makeWorld, ROOT, tmuxOrSkip, type Mcp, type World } from "./harness.js";

export const REAL_CLAUDE = process.env.CLAUDE_PATH || join(ROOT, "node_modules", ".bin", "claude");

/** An API key whose last 20 characters the prepared HOME approves. */
export const API_KEY = `sk-ant-api03-e2e-${"k".repeat(60)}-APPROVEDKEY0123456789`;
/** A second key the prepared HOME has never seen ("Do you want to use this API key?"). */
export const OTHER_KEY = `sk-ant-api03-e2e-${"o".repeat(60)}-NOTAPPROVED987654321`;

let versionCache: string | undefined | null = null;

/** `claude --version` of the binary under test ("2.1.330"), or undefined when it does not run. */
export function realClaudeVersion(): string | undefined {
  if (versionCache !== null) return versionCache;
  versionCache = undefined;
  if (existsSync(REAL_CLAUDE)) {
    const r = spawnSync(REAL_CLAUDE, ["--version"], {
      encoding: "utf8",
      timeout: 20_000,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/" },
    });
    const m = /^(\d+\.\d+\.\d+)/.exec(r.stdout ?? "");
    if (r.status === 0 && m) versionCache = m[1];
  }
  return versionCache;
}

/**
 * Whether the e2e suite can run: tmux and a working real CLI. On CI a missing CLI is a failure (it is a
 * devDependency; `npm ci` installs it); on a person's machine the suite is skipped with one loud line.
 */
export function realClaudeOrSkip(): boolean {
  if (!tmuxOrSkip()) return false;
  if (realClaudeVersion()) return true;
  const why = `the real claude CLI at ${REAL_CLAUDE} does not run (npm ci installs @anthropic-ai/claude-code; with --ignore-scripts its binary is a stub)`;
  if (process.env.CI) throw new Error(why);
  console.warn(`\n*** ${why}: SKIPPING the e2e suite. ***\n`);
  return false;
}

export interface E2e {
  world: World;
  mock: MockApi;
  /** The server's extra environment: CLAUDE_PATH and the offline block. */
  env: Record<string, string>;
  /** A directory created and trusted before any session started (see e2eWorld's `dirs`). */
  dir(name: string): string;
  connect(extra?: Record<string, string>): Promise<Mcp>;
  /** Main (non-side) requests whose last user text is exactly `text`. */
  requestsWith(text: string): RecordedRequest[];
  /** Every user text the mock saw in a request body (all turns of the conversation it carries). */
  userTexts(r: RecordedRequest): string[];
  events(sessionId: string): Array<Record<string, unknown>>;
  transcriptFile(cwd: string, claudeSessionId: string): string;
  cleanup(): Promise<void>;
}

/**
 * One mock, one prepared HOME and one state dir per test file. Every directory a session will use must
 * be named in `dirs` (trusted) or `untrusted` up front: running CLIs rewrite HOME/.claude.json, so it is
 * written once, before any of them starts.
 */
export async function e2eWorld(opts: { dirs: string[]; untrusted?: string[]; serverEnv?: Record<string, string> }): Promise<E2e> {
  const mock = await startMockApi({ verbose: Boolean(process.env.CS_E2E_VERBOSE) });
  const world = makeWorld({ CLAUDE_PATH: REAL_CLAUDE, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000", ...(opts.serverEnv ?? {}) });
  const dirs = new Map<string, string>();
  for (const n of [...opts.dirs, ...(opts.untrusted ?? [])]) dirs.set(n, world.dir(n));
  const prepared = await prepareClaudeHome({
    home: world.home,
    apiKey: API_KEY,
    trustedDirs: opts.dirs.map((n) => dirs.get(n)!),
    mockUrl: mock.url,
    cliVersion: realClaudeVersion() ?? "2.1.330",
  });
  const env: Record<string, string> = { ...prepared.env, CLAUDE_PATH: REAL_CLAUDE };
  Object.assign(world.env, env);
  return {
    world,
    mock,
    env,
    dir(name) {
      const d = dirs.get(name);
      if (!d) throw new Error(`e2e: directory ${name} was not declared in e2eWorld({dirs})`);
      return d;
    },
    async connect(extra = {}) {
      const m = await connect(world, extra);
      if (process.env.CS_E2E_TIMING) {
        // CS_E2E_TIMING=1: one line per tool call with its duration (how the README's numbers were measured).
        const call = m.callRaw.bind(m);
        m.callRaw = (async (name: string, args?: Record<string, unknown>, opts?: Parameters<typeof call>[2]) => {
          const t0 = performance.now();
          const r = await call(name, args, opts);
          console.log(`[e2e timing] ${name} ${Math.round(performance.now() - t0)} ms${r.ok ? "" : ` (${r.error?.code})`}`);
          return r;
        }) as typeof m.callRaw;
      }
      return m;
    },
    requestsWith: (text) => mock.mainRequests().filter((r) => r.lastUserText === text),
    userTexts(r) {
      const out: string[] = [];
      for (const m of (r.body?.messages ?? []) as Array<{ role: string; content: unknown }>) {
        if (m.role !== "user") continue;
        if (typeof m.content === "string") out.push(m.content);
        else if (Array.isArray(m.content))
          for (const b of m.content as Array<{ type: string; text?: string }>) if (b.type === "text" && b.text) out.push(b.text);
      }
      return out;
    },
    events(id) {
      return readFileSync(join(world.stateDir, id, "events.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    transcriptFile(cwd, claudeSessionId) {
      return join(world.home, ".claude", "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"), `${claudeSessionId}.jsonl`);
    },
    async cleanup() {
      world.cleanup();
      await mock.close();
    },
  };
}

/** Sends one prompt that makes the model call a tool (MOCK_BASH:/MOCK_WRITE:) and returns the tool result it was given. */
export async function toolResultOf(e: E2e, m: Mcp, sessionId: string, message: string): Promise<string> {
  const before = e.mock.requests.length;
  const r = await m.call("send_message", { session_id: sessionId, message });
  expect(r.ok, r.text).toBe(true);
  const result = e.mock.requests.slice(before).find((q) => q.toolResult)?.toolResult;
  expect(result, `no tool result after ${message}`).toBeDefined();
  return result!.text;
}

/**
 * Test harness: a private world per test file (temp HOME, temp state dir, a private tmux socket),
 * the built server started as a real process and driven by the MCP SDK's own Client over stdio.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ToolArgs, ToolData, ToolName } from "./tools.js";
import { it } from "vitest";
import { CLI, FAKE_CLAUDE, FIXTURES } from "./paths.js";

export { CLI, FAKE_CLAUDE, FIXTURES, ROOT } from "./paths.js";

export function hasTmux(): boolean {
  return spawnSync("tmux", ["-V"]).status === 0;
}

/** On CI a missing tmux is a failure; on a person's machine the tmux suites are skipped, loudly. */
export function tmuxOrSkip(): boolean {
  if (hasTmux()) return true;
  if (process.env.CI) throw new Error("tmux is not installed, and CI must run the tmux suites (.ci/run installs it)");
  console.warn("\n*** tmux is not installed: SKIPPING the tmux suites. Install tmux to run them. ***\n");
  return false;
}

export interface World {
  root: string;
  home: string;
  stateDir: string;
  socket: string;
  work: string;
  env: Record<string, string>;
  /** A fresh directory under the world's work dir. */
  dir(name: string): string;
  tmux(args: string[]): string;
  cleanup(): void;
}

export function makeWorld(extraEnv: Record<string, string> = {}): World {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-test-")));
  const home = join(root, "home");
  const stateDir = join(root, "state");
  const work = join(root, "work");
  for (const d of [home, work]) mkdirSync(d, { recursive: true });
  // Headless sessions have no trust screen: the server reads Claude's trust record, as a person who ran `claude`
  // once in the work folder would have left it (the record covers the folders below it).
  if (extraEnv.CLAUDE_SESSIONS_BACKEND === "headless") {
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ projects: { [work]: { hasTrustDialogAccepted: true } } }), {
      mode: 0o600,
    });
  }
  const socket = `cs-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const env: Record<string, string> = {
    PATH: [join(FIXTURES, "bin"), process.env.PATH ?? ""].join(delimiter),
    HOME: home,
    LANG: "C.UTF-8",
    CLAUDE_SESSIONS_DIR: stateDir,
    CLAUDE_SESSIONS_TMUX_SOCKET: socket,
    CLAUDE_PATH: FAKE_CLAUDE,
    CLAUDE_SESSIONS_START_TIMEOUT_MS: "15000",
    CLAUDE_SESSIONS_KILL_GRACE_MS: "2000",
    CLAUDE_SESSIONS_LOG_LEVEL: "debug",
    // A tool result that does not match its output schema fails the call (INTERNAL) instead of being logged.
    CLAUDE_SESSIONS_STRICT_RESULTS: "1",
    ...extraEnv,
  };
  const w: World = {
    root,
    home,
    stateDir,
    socket,
    work,
    env,
    dir(name) {
      const d = join(work, name);
      mkdirSync(d, { recursive: true });
      return d;
    },
    tmux(args) {
      return execFileSync("tmux", ["-L", socket, ...args], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: home },
      });
    },
    cleanup() {
      spawnSync("tmux", ["-L", socket, "kill-server"], { env: { PATH: process.env.PATH ?? "", HOME: home } });
      rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
  return w;
}

export interface ToolResult<T = Record<string, unknown>> {
  ok: boolean;
  data: T;
  error?: { code: string; message: string; retryable: boolean; suggestion: string; details?: Record<string, unknown> };
  text: string;
}

/** A failed turn is a tool error (TURN_FAILED / SESSION_DEAD) carrying the turn's result: that result. */
export function failedTurn(r: ToolResult<unknown>, code = "TURN_FAILED"): Record<string, unknown> {
  if (r.ok || r.error?.code !== code) throw new Error(`expected a ${code} tool error, got: ${r.text}`);
  return r.error.details?.result as Record<string, unknown>;
}

export interface CallOpts {
  timeout?: number;
  onprogress?: (p: unknown) => void;
  signal?: AbortSignal;
}

export interface Mcp {
  client: Client;
  stderr: () => string;
  /** A tool call typed by the tool's schemas in src/api (tests/helpers/tools.ts): arguments checked, data typed. */
  call<N extends ToolName>(name: N, args?: ToolArgs<N>, opts?: CallOpts): Promise<ToolResult<ToolData<N>>>;
  /** A call that must succeed: its data, or an Error carrying the tool's error text. */
  callOk<N extends ToolName>(name: N, args?: ToolArgs<N>, opts?: CallOpts): Promise<ToolData<N>>;
  /**
   * The loose escape hatch: any name, any arguments, untyped data. For tests that send invalid arguments on
   * purpose (hostile input, unknown tools, wrong types) and for tables of calls over several tools.
   */
  callRaw<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>, opts?: CallOpts): Promise<ToolResult<T>>;
  close(): Promise<void>;
  pid: number | undefined;
}

/** `whole: false`: return once initialized, not once the whole server is made (a test of that start). */
export async function connect(world: World, extraEnv: Record<string, string> = {}, o: { whole?: boolean } = {}): Promise<Mcp> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI],
    env: { ...world.env, ...extraEnv },
    stderr: "pipe",
    cwd: world.root,
  });
  let err = "";
  transport.stderr?.on("data", (b: Buffer) => (err += b.toString()));
  const client = new Client({ name: "cs-test", version: "1.0.0" });
  await client.connect(transport);
  // A stdio server answers initialize before the rest of it is made (cli/serve-early.ts); what the tests look at
  // right after connecting (state.json, the members' socket, adopted sessions) comes with the rest. prompts/list is
  // held until then, and reads nothing (a server without prompts answers with an error).
  if (o.whole !== false) await client.listPrompts().catch(() => {});
  const mcp: Mcp = {
    client,
    stderr: () => err,
    pid: transport.pid ?? undefined,
    async callRaw<T>(name: string, args: Record<string, unknown> = {}, opts: CallOpts = {}) {
      const res = await client.callTool({ name, arguments: args }, undefined, {
        timeout: opts.timeout ?? 60_000,
        ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? "";
      if (res.isError) {
        const parsed = JSON.parse(text) as { error: ToolResult["error"] };
        // A failed call has no data: reading it throws with the error, instead of a confusing undefined later.
        const failed: ToolResult<T> = { ok: false, error: parsed.error!, text, data: undefined as never };
        Object.defineProperty(failed, "data", {
          get() {
            throw new Error(`${name} failed, so it has no data: ${text}`);
          },
        });
        return failed;
      }
      return { ok: true, data: res.structuredContent as T, text };
    },
    call(name, args, opts) {
      return mcp.callRaw(name, args as Record<string, unknown> | undefined, opts);
    },
    async callOk(name, args, opts) {
      const r = await mcp.call(name, args, opts);
      if (!r.ok) throw new Error(`${name} ${JSON.stringify(args ?? {}).slice(0, 300)} failed: ${r.text}`);
      return r.data;
    },
    async close() {
      await client.close();
    },
  };
  return mcp;
}

export { until, waitFor } from "./wait.js";

/** node-pty loads in this Node (it is an optional native addon). */
export async function hasPty(): Promise<boolean> {
  try {
    await import("node-pty");
    return true;
  } catch {
    return false;
  }
}

/** The backends the contract suites run against: tmux (if installed, or on CI) and pty (if node-pty loads, or on CI). */
export async function contractBackends(): Promise<Array<"tmux" | "pty">> {
  const out: Array<"tmux" | "pty"> = [];
  if (tmuxOrSkip()) out.push("tmux");
  if (await hasPty()) out.push("pty");
  else if (process.env.CI) throw new Error("node-pty does not load, and CI must run the pty suites");
  else console.warn("\n*** node-pty does not load: SKIPPING the pty suites. Run npm install with a C++ toolchain. ***\n");
  return out;
}

export type BackendKind = "tmux" | "pty" | "headless";

/**
 * What each backend can do, as the contract suites ask it. Stated once here: a contract case that needs what a
 * backend lacks runs `it.runIf(can(backend, "…"))` and is not run for it. Headless sessions run the fake claude
 * in the Agent SDK's stream-json mode (tests/fixtures/fake-claude/stream-json.mjs): no terminal, so no screen,
 * no keys and nothing typed; the CLI's own agentic turn limit instead of the server's prompt count; no
 * doppler wrapping; the trust record read by the server instead of a trust screen; and two gaps, not designs: the
 * headless host appends the SDK's messages to output.log without rotating it, and a headless turn's figures come
 * from the SDK's result at once while the session's totals (from the transcript) catch up a moment later.
 */
export const CAPABILITIES = {
  tmux: {
    screen: true,
    keys: true,
    prompt_limit: true,
    doppler: true,
    startup_screens: true,
    raw_log_rotated: true,
    totals_at_turn_end: true,
  },
  pty: {
    screen: true,
    keys: true,
    prompt_limit: true,
    doppler: true,
    startup_screens: true,
    raw_log_rotated: true,
    totals_at_turn_end: true,
  },
  headless: {
    screen: false,
    keys: false,
    prompt_limit: false,
    doppler: false,
    startup_screens: false,
    raw_log_rotated: false,
    totals_at_turn_end: false,
  },
} as const satisfies Record<BackendKind, Record<string, boolean>>;

export type Capability = keyof (typeof CAPABILITIES)["tmux"];

export function can(backend: BackendKind, what: Capability): boolean {
  return CAPABILITIES[backend][what];
}

/**
 * `it` for a case a backend can run; for one it cannot, nothing is defined (the case does not apply to it, which the
 * CAPABILITIES table says once), so the report shows no skipped test.
 */
export function itWhere(
  backend: BackendKind,
  what: Capability,
): (name: string, fn: () => Promise<void>, timeout?: number) => void {
  return can(backend, what) ? (name, fn, timeout) => it(name, fn, timeout) : () => {};
}

/** The contract suites' backends: the terminal ones (contractBackends()) and headless, which needs neither tmux nor node-pty. */
export async function contractKinds(): Promise<BackendKind[]> {
  return [...(await contractBackends()), "headless"];
}

/** Processes whose working directory is inside `dir`: the sessions a test started, whatever the backend. */
export function processesIn(dir: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cwd = readlinkSync(`/proc/${p}/cwd`);
      if (cwd === dir || cwd.startsWith(dir + "/")) out.push(Number(p));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

/** Process-group leaders among `pids`: one per session (the launcher under tmux, the program under pty). */
export function groupLeaders(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[2]) === pid; // fields: state ppid pgrp …
    } catch {
      return false;
    }
  });
}

/**
 * Every argument of every tool, classified (issue #19, "Done when"): what it can do — start a program, read or
 * write a file, widen what a session may do without asking, reveal what a caller should not see — and the gate or
 * confinement that holds it. The table is checked against the live `tools/list`: a new argument fails this file
 * until it is classified here. Each row that is gated here has a probe (the built server, the fake claude, a
 * sentinel file that must never appear); rows fixed on other branches of issue #19 name the test that covers them
 * (`coveredBy`, naming the test that covers it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOLS } from "../../src/server/tools/index.js";
import { connect, makeWorld, processesIn, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const TMUX = tmuxOrSkip();

type Effect = "none" | "program" | "file" | "widen" | "reveal";

interface Ctx {
  w: World;
  /** The server with no operator switch set. */
  m: Mcp;
  /** A server started with these extra variables (one per set, kept for the file). */
  server(env: Record<string, string>): Promise<Mcp>;
  /** A path that must never be created (one per probe). */
  sentinel: string;
  /** A folder Claude Code does not trust, whose project settings would create the sentinel at SessionStart. */
  hooked(): string;
  /** A fresh session of the plain server (tmux, fake claude). */
  session(): Promise<string>;
  /** A session of the plain server that has ended (resumable). */
  ended(): Promise<string>;
}

interface Row {
  effect: Effect;
  /** The gate (operator switch) or confinement, as docs/security.md "Untrusted text" states it. */
  gate: string;
  probe?: (c: Ctx) => Promise<void>;
  /** Another test covers this row (named here). */
  coveredBy?: string;
}

const none = (why: string): Row => ({ effect: "none", gate: why });

async function refused(
  r: Promise<{ ok: boolean; error?: { code: string; message: string; suggestion: string } | undefined; text: string }>,
  code: string,
  mention?: string,
): Promise<void> {
  const x = await r;
  expect(x.ok, x.text).toBe(false);
  expect(x.error?.code, x.text).toBe(code);
  if (mention) expect(`${x.error?.message} ${x.error?.suggestion}`).toContain(mention);
}

const TEXT = "text to the model (a --flag=value argument or the SDK's option, never a shell)";
const ADDRESS = "names a session of this server (validated id, resolved in src/sessions/teams/team.ts)";
const IDEM: Row = {
  effect: "none",
  gate: "a retry's key (printable ASCII without spaces, ≤ 128): only the SHA-256 of (caller, tool, key) names a file, under <state>/idempotency/",
  coveredBy: "tests/integration/idempotency.test.ts (a bad key is INVALID_ARGUMENT and nothing runs)",
};

/** start_session's arguments; run_task has them too. */
const START: Record<string, Row> = {
  idempotency_key: IDEM,
  account: {
    effect: "none",
    gate: "names an account of the operator's CLAUDE_SESSIONS_ACCOUNTS file (or auto); the folder or key comes from that file and the server's environment only, into the CLI's environment",
    coveredBy: "tests/integration/multi-account.test.ts (an unknown account, a bad file: INVALID_ARGUMENT, nothing started)",
  },
  on_limit: none("one of wait, fail, switch_account (zod enum): what the server does at a usage limit, recorded as a name"),
  node: {
    effect: "none",
    gate: "names a node of the operator's nodes file (validated name; the exec argv comes from that file only, the call travels as MCP JSON)",
    coveredBy: "tests/integration/nodes.test.ts (hostile node names refused), tests/unit/nodes-config.test.ts",
  },
  session_id: {
    effect: "file",
    gate: "names <state>/<id>: letters, digits, '-' and '_' only (schema)",
    probe: async (c) => refused(c.m.call("start_session", { cwd: c.w.work, session_id: "../escape" }), "INVALID_ARGUMENT"),
  },
  cwd: {
    effect: "program",
    gate: "Claude runs the folder's project settings (hooks): tmux/pty stop at the trust screen, headless reads Claude's trust record (STARTUP_BLOCKED; trust_workspace is the way out)",
    probe: async (c) =>
      refused(c.m.call("start_session", { cwd: c.hooked(), backend: "headless" }), "STARTUP_BLOCKED", "trust_workspace"),
  },
  prompt: {
    effect: "program",
    gate: "a prompt is text: control characters, the bash-mode prefix '!' and slash commands are refused by the terminal runners; headless (a stream-json message) refuses slash commands only (bash mode needs CLAUDE_SESSIONS_ALLOW_BASH_MODE)",
    probe: async (c) =>
      refused(c.m.call("start_session", { cwd: c.w.dir("prompt"), prompt: `!touch ${c.sentinel}` }), "INVALID_ARGUMENT"),
  },
  model: none(TEXT),
  permission_mode: {
    effect: "widen",
    gate: "bypassPermissions needs CLAUDE_SESSIONS_ALLOW_BYPASS; the modes callers may choose: CLAUDE_SESSIONS_PERMISSION_MODES",
    probe: async (c) => {
      await refused(
        c.m.call("start_session", { cwd: c.w.dir("mode"), permission_mode: "bypassPermissions" }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_BYPASS",
      );
      const s = await c.server({ CLAUDE_SESSIONS_PERMISSION_MODES: "default,plan" });
      for (const mode of ["auto", "dontAsk", "acceptEdits"] as const)
        await refused(
          s.call("start_session", { cwd: c.w.dir("mode"), permission_mode: mode }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_PERMISSION_MODES",
        );
    },
  },
  max_turns: none("a number the server or the CLI counts"),
  max_budget_usd: none("a number the server or the CLI counts"),
  team_name: none("a label (stored, shown, put in CLAUDE_TEAM_NAME)"),
  teammate_name: none("a label (stored, shown, put in CLAUDE_TEAMMATE_NAME)"),
  team_lead: {
    effect: "widen",
    gate: "needs a team_name; the lead's member server starts teammates with start_session's checks and limits, the lead's own permission settings, in its cwd or below (tests/integration/members.test.ts)",
    probe: async (c) =>
      refused(c.m.call("start_session", { cwd: c.w.dir("lead"), team_lead: true }), "INVALID_ARGUMENT", "team_name"),
  },
  append_system_prompt: none(TEXT),
  add_dirs: {
    effect: "widen",
    gate: "existing directories only; CLAUDE_SESSIONS_ALLOW_ADD_DIRS=0 refuses it",
    probe: async (c) => {
      await refused(
        c.m.call("start_session", { cwd: c.w.dir("dirs"), add_dirs: [join(c.w.root, "missing")] }),
        "INVALID_ARGUMENT",
      );
      const s = await c.server({ CLAUDE_SESSIONS_ALLOW_ADD_DIRS: "0" });
      await refused(
        s.call("start_session", { cwd: c.w.dir("dirs"), add_dirs: [c.w.root] }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_ADD_DIRS",
      );
    },
  },
  allowed_tools: {
    effect: "widen",
    gate: "tools Claude uses without asking: CLAUDE_SESSIONS_ALLOW_TOOL_RULES=0 refuses it",
    probe: async (c) => {
      const s = await c.server({ CLAUDE_SESSIONS_ALLOW_TOOL_RULES: "0" });
      await refused(
        s.call("start_session", { cwd: c.w.dir("tools"), allowed_tools: ["Bash"] }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_TOOL_RULES",
      );
    },
  },
  disallowed_tools: none("only narrows what Claude may do"),
  env: {
    effect: "program",
    gate: "values reach the process only; variables that choose what runs (PATH, LD_*, NODE_OPTIONS, HOME, CLAUDE_CONFIG_DIR, …) need CLAUDE_SESSIONS_ALLOW_ENV; hooks call their tools by absolute paths",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.dir("env"), env: { LD_PRELOAD: c.sentinel } }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_ENV",
      ),
  },
  log_file: {
    effect: "file",
    gate: "a new file (exclusive, 0600, no link followed) in an existing directory of the server's user",
    probe: async (c) => {
      const f = join(c.w.dir("log"), "existing.txt");
      writeFileSync(f, "keep\n");
      await refused(c.m.call("start_session", { cwd: c.w.dir("log"), log_file: f }), "INVALID_ARGUMENT");
      expect(readFileSync(f, "utf8")).toBe("keep\n");
    },
  },
  backend: none("chooses tmux, pty or headless; each backend's gates apply"),
  stream_output: none("subscribes the calling client to its own new session's transcript resource"),
  doppler: {
    effect: "program",
    gate: "runs the operator's doppler CLI (DOPPLER_PATH or PATH) with validated project/config names; the secrets are what the operator's Doppler login can read",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.dir("doppler"), doppler: { project: `x;touch ${c.sentinel}` } }),
        "INVALID_ARGUMENT",
      ),
    coveredBy:
      "item 10 (the server's DOPPLER_TOKEN reaching sessions): tests/integration/secrets.test.ts (DOPPLER_* only under doppler run)",
  },
  trust_workspace: {
    effect: "widen",
    gate: "accepts Claude Code's folder trust: CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE=0 refuses it",
    probe: async (c) => {
      const s = await c.server({ CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE: "0" });
      await refused(
        s.call("start_session", { cwd: c.hooked(), backend: "headless", trust_workspace: true }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE",
      );
    },
  },
  doppler_project: {
    effect: "program",
    gate: "as doppler.project",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.dir("doppler"), doppler_project: `-x;touch ${c.sentinel}` }),
        "INVALID_ARGUMENT",
      ),
  },
  doppler_config: {
    effect: "program",
    gate: "as doppler.config",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.dir("doppler"), doppler_config: `$(touch ${c.sentinel})` }),
        "INVALID_ARGUMENT",
      ),
  },
  worktree: {
    effect: "file",
    gate: "git worktree add under <state>/worktrees/<id> with validated refs; git runs no hooks or fsmonitor",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.work, worktree: { base: `--upload-pack=touch ${c.sentinel}` } }),
        "INVALID_ARGUMENT",
      ),
    coveredBy:
      "item 5 (the repository's filter drivers, external diff, textconv in the server's git): tests/integration/confinement.test.ts (filter drivers and textconv never run)",
  },
  copy_files: {
    effect: "file",
    gate: "files inside the repository, copied into the new worktree",
    probe: async (c) =>
      refused(c.m.call("start_session", { cwd: c.w.work, worktree: true, copy_files: ["../../etc/passwd"] }), "INVALID_ARGUMENT"),
    coveredBy:
      "item 6 (copy_files following links out of the worktree): tests/integration/confinement.test.ts (copy_files refuses links)",
  },
  setup_command: {
    effect: "program",
    gate: "its program, resolved, must be in CLAUDE_SESSIONS_SETUP_COMMANDS; the string form also needs CLAUDE_SESSIONS_ALLOW_SETUP_SHELL",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.work, worktree: true, setup_command: ["/bin/sh", "-c", `touch ${c.sentinel}`] }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_SETUP_COMMANDS",
      ),
  },
  sandbox: {
    effect: "none",
    gate: "only confines: a caller may ask for the sandbox and narrow CLAUDE_SESSIONS_SANDBOX_HOSTS, never widen it; false is refused under CLAUDE_SESSIONS_SANDBOX=required",
    probe: async (c) =>
      refused(
        c.m.call("start_session", { cwd: c.w.work, sandbox: { allow_hosts: ["evil.example"] } }),
        "INVALID_ARGUMENT",
        "narrow",
      ),
    coveredBy: "tests/integration/sandbox.test.ts, tests/e2e/sandbox.test.ts",
  },
  system_prompt: none(TEXT),
  fallback_model: none(TEXT),
  mcp_servers: {
    effect: "program",
    gate: "every backend: a stdio server (command) needs CLAUDE_SESSIONS_ALLOW_MCP_SERVERS or its command in CLAUDE_SESSIONS_MCP_COMMANDS; http/sse start nothing; env/header values reach the CLI through its environment only",
    probe: async (c) => {
      for (const backend of ["headless", "tmux"] as const) {
        await refused(
          c.m.call("start_session", {
            cwd: c.w.work,
            backend,
            mcp_servers: { x: { command: "/bin/sh", args: ["-c", `touch ${c.sentinel}`] } },
          }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_MCP_SERVERS",
        );
      }
    },
  },
  strict_mcp_config: none("only narrows which MCP servers load"),
  setting_sources: none(
    "only narrows which settings files load (default: all; a project's hooks load only in a folder Claude Code trusts)",
  ),
  output_schema: none("a JSON schema for the answer"),
  effort: none("one of the CLI's effort levels (an enum)"),
  agents: {
    effect: "widen",
    gate: "a sub-agent's own tools: CLAUDE_SESSIONS_ALLOW_TOOL_RULES=0 refuses them; no hooks, MCP servers or permission mode of its own (the schema refuses those fields); its text is the model's (a --flag=value argument or the SDK's option)",
    probe: async (c) => {
      const s = await c.server({ CLAUDE_SESSIONS_ALLOW_TOOL_RULES: "0" });
      await refused(
        s.call("start_session", { cwd: c.w.dir("tools"), agents: { rev: { description: "d", prompt: "p", tools: ["Bash"] } } }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_TOOL_RULES",
      );
      await refused(
        c.m.call("start_session", {
          cwd: c.w.dir("tools"),
          agents: { rev: { description: "d", prompt: "p", hooks: { Stop: [] } } as never },
        }),
        "INVALID_ARGUMENT",
      );
    },
  },
  agent: none("names a sub-agent (a validated name)"),
  tools: none("only narrows the built-in tool set"),
  betas: none("one of the SDK's beta headers (an enum)"),
  debug: {
    effect: "file",
    gate: "Claude's debug log goes to the session's own directory (<state>/<id>/claude-debug.log), never a path the caller names",
    coveredBy: "tests/e2e/options.test.ts (the debug log in the session's directory)",
  },
};

function sameAs(tool: string, arg: string, extra?: (c: Ctx) => Promise<void>): Row {
  const r = START[arg]!;
  return {
    ...r,
    gate:
      r.effect === "none"
        ? r.gate
        : `as start_session.${arg}${tool === "run_task" ? " (run_task starts a session the same way)" : ""}`,
    ...(extra ? { probe: extra } : {}),
  };
}

const TABLE: Record<string, Record<string, Row>> = {
  start_session: START,
  run_task: {
    ...Object.fromEntries(Object.keys(START).map((k) => [k, sameAs("run_task", k)])),
    setup_command: sameAs("run_task", "setup_command", async (c) =>
      refused(
        c.m.call("run_task", {
          cwd: c.w.work,
          prompt: "hi",
          worktree: true,
          setup_command: ["python3", "-c", `open('${c.sentinel}','w')`],
        }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_SETUP_COMMANDS",
      ),
    ),
    mcp_servers: sameAs("run_task", "mcp_servers", async (c) =>
      refused(
        c.m.call("run_task", {
          cwd: c.w.work,
          prompt: "hi",
          mcp_servers: { x: { command: "sh", args: ["-c", `touch ${c.sentinel}`] } },
        }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_MCP_SERVERS",
      ),
    ),
    env: sameAs("run_task", "env", async (c) =>
      refused(
        c.m.call("run_task", { cwd: c.w.dir("env"), prompt: "hi", backend: "tmux", env: { PATH: c.w.root } }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_ENV",
      ),
    ),
    cwd: sameAs("run_task", "cwd", async (c) =>
      refused(c.m.call("run_task", { cwd: c.hooked(), prompt: "hi" }), "STARTUP_BLOCKED", "trust_workspace"),
    ),
    timeout_ms: none("a number"),
    keep_session: none("a boolean"),
    wait_for_usage: none("a boolean"),
  },
  resume_session: {
    idempotency_key: IDEM,
    account: {
      ...START.account!,
      gate: `${START.account!.gate}; another account than the session's copies its transcript into that account's folder`,
    },
    on_limit: START.on_limit!,
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    claude_session_id: {
      effect: "file",
      gate: "a conversation's UUID (reads Claude's transcript of it); anything else is refused",
      probe: async (c) =>
        refused(c.m.call("resume_session", { claude_session_id: "../../../etc/passwd", cwd: c.w.work }), "INVALID_ARGUMENT"),
    },
    cwd: {
      effect: "program",
      gate: "as start_session.cwd",
      probe: async (c) =>
        refused(
          c.m.call("resume_session", {
            claude_session_id: "0b7cf3a2-5a52-4a40-9a4e-3f3c1b7c8d11",
            cwd: c.hooked(),
            backend: "headless",
          }),
          "STARTUP_BLOCKED",
          "trust_workspace",
        ),
    },
    message: {
      effect: "program",
      gate: "as start_session.prompt",
      probe: async (c) =>
        refused(c.m.call("resume_session", { session_id: await c.ended(), message: `!touch ${c.sentinel}` }), "INVALID_ARGUMENT"),
    },
    fork: none("a boolean: a new session from the conversation so far"),
    resume_at: {
      effect: "none",
      gate: "a uuid (schema) that must be a message of the conversation's transcript (read, never written); the SDK's resumeSessionAt",
      probe: async (c) =>
        refused(
          c.m.call("resume_session", {
            session_id: await c.ended(),
            resume_at: "0b7cf3a2-5a52-4a40-9a4e-3f3c1b7c8d11",
            backend: "headless",
          }),
          "INVALID_ARGUMENT",
          "get_conversation",
        ),
    },
    model: START.model!,
    append_system_prompt: START.append_system_prompt!,
    disallowed_tools: START.disallowed_tools!,
    permission_mode: sameAs("resume_session", "permission_mode", async (c) => {
      await refused(
        c.m.call("resume_session", { session_id: await c.ended(), permission_mode: "bypassPermissions" }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_BYPASS",
      );
      const s = await c.server({ CLAUDE_SESSIONS_PERMISSION_MODES: "default,plan" });
      await refused(
        s.call("resume_session", { session_id: await c.ended(), permission_mode: "acceptEdits" }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_PERMISSION_MODES",
      );
    }),
    add_dirs: sameAs("resume_session", "add_dirs", async (c) => {
      await refused(
        c.m.call("resume_session", { session_id: await c.ended(), add_dirs: [join(c.w.root, "missing")] }),
        "INVALID_ARGUMENT",
      );
      const s = await c.server({ CLAUDE_SESSIONS_ALLOW_ADD_DIRS: "0" });
      await refused(
        s.call("resume_session", { session_id: await c.ended(), add_dirs: [c.w.root] }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_ADD_DIRS",
      );
    }),
    allowed_tools: sameAs("resume_session", "allowed_tools", async (c) => {
      const s = await c.server({ CLAUDE_SESSIONS_ALLOW_TOOL_RULES: "0" });
      await refused(
        s.call("resume_session", { session_id: await c.ended(), allowed_tools: ["Bash"] }),
        "PERMISSION_DENIED",
        "CLAUDE_SESSIONS_ALLOW_TOOL_RULES",
      );
    }),
    max_budget_usd: none("a number"),
    backend: START.backend!,
    env: {
      effect: "program",
      gate: "as start_session.env",
      probe: async (c) =>
        refused(
          c.m.call("resume_session", { session_id: await c.ended(), env: { NODE_OPTIONS: `--require ${c.sentinel}` } }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_ENV",
        ),
    },
    doppler: sameAs("resume_session", "doppler"),
    trust_workspace: {
      effect: "widen",
      gate: "as start_session.trust_workspace",
      probe: async (c) => {
        const s = await c.server({ CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE: "0" });
        await refused(
          s.call("resume_session", { session_id: await c.ended(), trust_workspace: true }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE",
        );
      },
    },
    doppler_project: sameAs("resume_session", "doppler_project"),
    doppler_config: sameAs("resume_session", "doppler_config"),
    system_prompt: START.system_prompt!,
    fallback_model: START.fallback_model!,
    mcp_servers: {
      effect: "program",
      gate: "as start_session.mcp_servers (never stored: given again on each resume)",
      probe: async (c) =>
        refused(
          c.m.call("resume_session", {
            session_id: await c.ended(),
            backend: "headless",
            mcp_servers: { x: { command: "node", args: ["-e", "0"] } },
          }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_MCP_SERVERS",
        ),
    },
    strict_mcp_config: START.strict_mcp_config!,
    setting_sources: START.setting_sources!,
    output_schema: START.output_schema!,
  },
  reset_session: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
  },
  compact_session: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    idempotency_key: IDEM,
    instructions: {
      effect: "program",
      gate: "typed after the server's own /compact: checked as prompt text (no control characters), one line, ≤ 2,000 characters",
      coveredBy: "tests/integration/session-life.test.ts (compact_session … checked instructions)",
    },
  },
  kill_session: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    force: none("how a process is ended"),
    hibernate: none("ends the process and keeps the session (the next prompt resumes it)"),
    remove_worktree: {
      effect: "file",
      gate: "removes the session's own worktree under <state>/worktrees (refused with uncommitted changes unless force)",
      coveredBy: "tests/integration/worktrees.test.ts",
    },
    save_state: none("keeps or drops the server's own record"),
  },
  list_sessions: {
    status_filter: none("a filter"),
    team_filter: none("a filter"),
    limit: none("a number"),
    include_metadata: {
      effect: "reveal",
      gate: "argv, system prompts and environment names are left out",
      coveredBy:
        "item 10 (include_metadata showing append_system_prompt): tests/integration/confinement.test.ts (include_metadata without the system prompt)",
    },
    include_sensitive: {
      effect: "reveal",
      gate: "CLAUDE_SESSIONS_ALLOW_SENSITIVE",
      probe: async (c) =>
        refused(
          c.m.call("list_sessions", { include_metadata: true, include_sensitive: true }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_SENSITIVE",
        ),
    },
    node_filter: none("a filter over the configured nodes"),
    include_native: {
      effect: "reveal",
      gate: "the server user's own Claude Code background sessions, read with `claude agents --json --all` (a fixed argv)",
      coveredBy: "tests/e2e/native.test.ts",
    },
  },
  send_message: {
    session_id: none(ADDRESS),
    native_session_id: {
      effect: "program",
      gate: "names one of the server user's own Claude Code background sessions (validated id, never option-like); the message is checked as any prompt",
      coveredBy: "tests/e2e/native.test.ts (unknown, option-like and double-addressed ids)",
    },
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    message: {
      effect: "program",
      gate: "as start_session.prompt",
      probe: async (c) =>
        refused(c.m.call("send_message", { session_id: await c.session(), message: `!touch ${c.sentinel}` }), "INVALID_ARGUMENT"),
    },
    wait_for_response: none("a boolean"),
    wait_for_usage: none("a boolean"),
    timeout_ms: none("a number"),
    queue: none("a boolean"),
    bash_mode: {
      effect: "program",
      gate: "CLAUDE_SESSIONS_ALLOW_BASH_MODE",
      probe: async (c) =>
        refused(
          c.m.call("send_message", { session_id: await c.session(), message: `touch ${c.sentinel}`, bash_mode: true }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_BASH_MODE",
        ),
    },
    include_context: {
      effect: "file",
      gate: "reads what git reports changed in the session's cwd (as sync_context)",
      coveredBy:
        "item 9 (sync_context sending secrets): tests/integration/confinement.test.ts (sync_context never mentions a file of secrets)",
    },
    idempotency_key: IDEM,
  },
  wait_for_completion: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    timeout_ms: none("a number"),
    poll_interval_ms: none("ignored"),
    check_idle: none("a boolean"),
  },
  stream_output: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    mode: {
      effect: "file",
      gate: "reads only the session's own files (a log_file replaced since is not read)",
      coveredBy: "tests/integration/hostile.test.ts (log_file)",
    },
    cursor: none("a position in the session's own output"),
    lines: none("a number"),
    follow: none("a boolean"),
    timeout_ms: none("a number"),
  },
  respond_permission: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    decision: {
      effect: "widen",
      gate: "the MCP client is the one who approves (by design); a session approving its own requests",
      coveredBy:
        "item 8 (self-approval through the state directory): tests/e2e/state-deny.test.ts and tests/integration/confinement.test.ts (deny rules, script content)",
    },
    message: none("text Claude reads with a denial"),
    updated_input: {
      effect: "widen",
      gate: "the approver's edit of the tool input (as decision)",
      coveredBy: "tests/integration/permission-hook.test.ts",
    },
  },
  answer_prompt: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    choice: {
      effect: "widen",
      gate: "the MCP client answers the screen (by design, as respond_permission); only a row of the table the server made from the screen is pressed, the caller's text is never typed",
      coveredBy: "tests/unit/session-screens.test.ts (an off-screen choice presses nothing), tests/e2e/screens.test.ts",
    },
  },
  interrupt_session: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    timeout_ms: none("a number"),
  },
  health_check: {},
  configure: {
    action: none("get_config reads; changes are gated by allow_bypass_permissions' row"),
    allow_bypass_permissions: {
      effect: "widen",
      gate: "CLAUDE_SESSIONS_ALLOW_CONFIGURE",
      probe: async (c) =>
        refused(
          c.m.call("configure", { action: "set_bypass_permissions", allow_bypass_permissions: true }),
          "PERMISSION_DENIED",
          "CLAUDE_SESSIONS_ALLOW_CONFIGURE",
        ),
    },
  },
  list_conversations: {
    cwd: none("a filter over the transcript index"),
    since: none("a date"),
    until: none("a date"),
    limit: none("a number"),
    cursor: none("a page"),
  },
  get_conversation: {
    claude_session_id: {
      effect: "file",
      gate: "a conversation of the transcript index (an id, never a path)",
      probe: async (c) =>
        refused(c.m.call("get_conversation", { claude_session_id: "../../../../etc/passwd" }), "INVALID_ARGUMENT"),
    },
    node: START.node!,
    cursor: none("a page"),
    from: none("start or end"),
    limit: none("a number"),
    max_chars: none("a number"),
  },
  search_conversations: {
    query: none("words matched in the index"),
    cwd: none("a filter"),
    since: none("a date"),
    until: none("a date"),
    limit: none("a number"),
  },
  get_execution_history: { limit: none("a number"), session_id: none("a filter") },
  clear_execution_history: { session_id: none("clears the server's own turn log, never Claude's transcripts") },
  broadcast_message: {
    team_name: none("a group of this server's sessions"),
    session_ids: none("a group of this server's sessions"),
    message: {
      effect: "program",
      gate: "as send_message.message (each member's send checks it)",
      probe: async (c) => {
        const r = await c.m.call("broadcast_message", { session_ids: [await c.session()], message: `!touch ${c.sentinel}` });
        if (r.ok) {
          expect(r.data.sent_count).toBe(0);
          expect(r.data.results[0]?.error?.code).toBe("INVALID_ARGUMENT");
        } else expect(r.error?.code).toBe("INVALID_ARGUMENT");
      },
    },
    wait_for_response: none("a boolean"),
    timeout_ms: none("a number"),
    idempotency_key: IDEM,
  },
  wait_for_sessions: {
    team_name: none("a group"),
    session_ids: none("a group"),
    mode: none("any or all"),
    timeout_ms: none("a number"),
  },
  sync_context: {
    session_id: none(ADDRESS),
    team_name: none(ADDRESS),
    teammate_name: none(ADDRESS),
    context_type: {
      effect: "reveal",
      gate: "what is read: files, env names, git status of the session's cwd",
      coveredBy:
        "item 9 (sync_context sending secrets): tests/integration/confinement.test.ts (sync_context never mentions a file of secrets)",
    },
    paths: {
      effect: "file",
      gate: "files inside the session's cwd; secrets filtered",
      coveredBy:
        "item 9 (sync_context sending secrets): tests/integration/confinement.test.ts (sync_context never mentions a file of secrets)",
    },
    force: none("a boolean"),
    wait_for_response: none("a boolean"),
    timeout_ms: none("a number"),
    idempotency_key: IDEM,
  },
  // Issue 37: a schedule keeps run_task's arguments and runs them through server/call.ts as schedule:<name>, so each
  // run meets every gate of run_task as of when it runs (a refused run is recorded with its code).
  schedule_task: {
    ...Object.fromEntries(Object.keys(START).map((k) => [k, scheduled(k)])),
    timeout_ms: none("a number"),
    keep_session: none("a boolean"),
    env: {
      effect: "none",
      gate: "refused: a schedule never stores env (its values may be secrets)",
      probe: async (c) =>
        refused(
          c.m.call("schedule_task", { name: "env", every: "5m", cwd: c.w.work, prompt: "hi", env: { PATH: c.w.root } }),
          "INVALID_ARGUMENT",
          "env",
        ),
    },
    session_id: {
      effect: "none",
      gate: "refused: each run starts a new session",
      probe: async (c) =>
        refused(
          c.m.call("schedule_task", { name: "sid", every: "5m", cwd: c.w.work, prompt: "hi", session_id: "a-fixed-id" }),
          "INVALID_ARGUMENT",
          "session_id",
        ),
    },
    name: none("a validated name (letters, digits, . _ -): a key in <state>/schedules.json, never a path"),
    cron: none("parsed by croner; never a shell or crontab"),
    at: none("an ISO time"),
    every: none("a number and a unit"),
    overlap: none("skip or queue"),
    catch_up: none("once or skip"),
    send_to: {
      effect: "program",
      gate: "each run is send_message (the prompt checked as any prompt) to that session through server/call.ts as schedule:<name>: every gate and the session's budget as of when it runs; run_task's options with it are refused",
      coveredBy: "tests/integration/schedules-send.test.ts (obeys the session's budget; bad input is a typed error)",
    },
  },
  list_schedules: { name: none("a filter") },
  change_schedule: { name: none("names a schedule"), action: none("pause, resume or delete") },
  fan_out: {
    cwd: {
      effect: "program",
      gate: "as start_session.cwd (each attempt is a start_session in a worktree of the cwd's repository); not a git repository or a dirty base is refused",
      coveredBy: "tests/integration/fan-out.test.ts (bad input is refused before anything is made)",
    },
    prompt: {
      effect: "program",
      gate: "as start_session.prompt (each attempt's first prompt)",
      coveredBy: "tests/integration/fan-out.test.ts (a fan-out whose sessions do not all start…)",
    },
    n: none("a count ≤ CLAUDE_SESSIONS_MAX_FAN_OUT (LIMIT_REACHED above it; tests/integration/fan-out.test.ts)"),
    variants: {
      effect: "widen",
      gate: "model (text) and permission_mode per attempt, each as start_session.permission_mode; one refused → the fan-out's sessions, worktrees and branches are removed",
      coveredBy: "tests/integration/fan-out.test.ts (a fan-out whose sessions do not all start…)",
    },
    model: none(TEXT),
    permission_mode: {
      effect: "widen",
      gate: "as start_session.permission_mode",
      coveredBy: "tests/integration/fan-out.test.ts (a fan-out whose sessions do not all start…)",
    },
    backend: START.backend!,
    trust_workspace: {
      effect: "widen",
      gate: "as start_session.trust_workspace (the worktrees under <state>/worktrees)",
      coveredBy: "tests/integration/fan-out.test.ts (three attempts…)",
    },
    timeout_ms: none("a number"),
    idempotency_key: IDEM,
  },
  merge_worktree: {
    idempotency_key: IDEM,
    session_id: none(ADDRESS),
    target: {
      effect: "file",
      gate: "an existing branch of the session's repository (check-ref-format, refs/heads/ only, never an option); it moves only after the operator's checks pass on the merged result",
      coveredBy: "tests/integration/merge-worktree.test.ts (bad input changes nothing)",
    },
    strategy: none("merge, squash or rebase (an enum)"),
  },
  // Issue 36: a move's steps travel as MCP JSON between machines; nothing becomes a command or a path of the caller's.
  move_session: {
    session_id: none(ADDRESS),
    node: {
      effect: "none",
      gate: "names a node of the operator's nodes file (validated name) or local/auto",
      coveredBy: "tests/integration/move.test.ts (unknown and same node refused, nothing changed)",
    },
  },
  transfer_session: {
    op: none("one of six steps"),
    session_id: none(ADDRESS),
    move_id: none(
      "mv- and letters or digits: a record's mark and the coordinator's journal name, never a path given by a caller",
    ),
    seq: none("a number (release refuses a session changed since export)"),
    bundle: {
      effect: "file",
      gate: "writes only <claude config>/projects/<cwd mangled>/<UUID>.jsonl (created exclusively, mode 0600; a different existing file is ALREADY_EXISTS); the cwd must be a directory there; the record keeps known fields only, and its options meet every gate of the receiving machine again when it wakes (admitResume)",
      coveredBy:
        "tests/integration/move.test.ts (the conversation arrives; a busy, worktree or unknown session is refused and nothing changes)",
    },
  },
};

/** A run_task argument kept by a schedule: gated when each run starts, exactly as run_task's. */
function scheduled(arg: string): Row {
  const r = START[arg]!;
  return r.effect === "none"
    ? { effect: "none", gate: r.gate }
    : {
        effect: r.effect,
        gate: `as run_task.${arg}, when each run starts (through server/call.ts)`,
        coveredBy: "tests/integration/schedules.test.ts (a run a gate refuses is recorded with its code)",
      };
}

describe.runIf(TMUX)("every argument that can start a program, touch a file or widen a session is gated or confined", () => {
  let w: World;
  const servers = new Map<string, Mcp>();
  let ctx: Ctx;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux", MAX_CONCURRENT_SESSIONS: "50" });
    const m = await connect(w);
    let n = 0;
    ctx = {
      w,
      m,
      sentinel: join(w.root, "pwned-table"),
      async server(env) {
        const key = JSON.stringify(env);
        let s = servers.get(key);
        if (!s) servers.set(key, (s = await connect(w, env)));
        return s;
      },
      hooked() {
        const dir = w.dir(`hooked-${n++}`);
        mkdirSync(join(dir, ".claude"), { recursive: true });
        writeFileSync(
          join(dir, ".claude", "settings.json"),
          JSON.stringify({
            hooks: { SessionStart: [{ matcher: "*", hooks: [{ type: "command", command: `touch ${this.sentinel}` }] }] },
          }),
        );
        return dir;
      },
      async session() {
        const s = await m.callOk("start_session", { cwd: w.dir(`plain-${n++}`) });
        return s.session_id;
      },
      async ended() {
        const id = await this.session();
        await m.callOk("kill_session", { session_id: id });
        return id;
      },
    };
  });
  afterAll(async () => {
    await ctx?.m.close();
    for (const s of servers.values()) await s.close();
    w?.cleanup();
  });

  // Every argument the server accepts: its zod schemas (tools/list leaves some out, issue 25: aliases, an ignored
  // one, and run_task's start_session arguments), and every one tools/list shows is among them.
  it("the table names every argument of every tool, and only those", async () => {
    const accepted = Object.fromEntries(
      TOOLS.map((t) => [
        t.name,
        Object.keys((z.toJSONSchema(t.input, { io: "input" }) as { properties?: object }).properties ?? {}).sort(),
      ]),
    );
    const table = Object.fromEntries(Object.entries(TABLE).map(([t, rows]) => [t, Object.keys(rows).sort()]));
    expect(table).toEqual(accepted);
    const { tools } = await ctx.m.client.listTools();
    for (const t of tools)
      for (const a of Object.keys((t.inputSchema as { properties?: object }).properties ?? {}))
        expect(accepted[t.name], `${t.name}.${a}`).toContain(a);
  });

  it("every row that can start a program, touch a file, widen or reveal names its gate and has a probe here or a test that covers it", () => {
    for (const [tool, rows] of Object.entries(TABLE)) {
      for (const [arg, row] of Object.entries(rows)) {
        expect(row.gate.length, `${tool}.${arg}`).toBeGreaterThan(3);
        if (row.effect !== "none")
          expect(Boolean(row.probe) || Boolean(row.coveredBy), `${tool}.${arg} needs a probe or coveredBy`).toBe(true);
      }
    }
  });

  const probes = Object.entries(TABLE).flatMap(([tool, rows]) =>
    Object.entries(rows).flatMap(([arg, row]) =>
      row.probe ? [{ name: `${tool}.${arg} (${row.effect}): ${row.gate}`, probe: row.probe }] : [],
    ),
  );
  it.each(probes.map((p, i) => ({ ...p, i })))("$name", async ({ probe, i }) => {
    ctx.sentinel = join(w.root, `pwned-probe-${i}`);
    await probe(ctx);
    expect(existsSync(ctx.sentinel)).toBe(false);
  });

  it("no probe started anything in a hooked folder or left a sentinel", () => {
    for (let i = 0; i < 50; i++) expect(processesIn(join(w.work, `hooked-${i}`))).toEqual([]);
    expect(readdirSync(w.root).filter((f) => f.startsWith("pwned-"))).toEqual([]);
  });
});

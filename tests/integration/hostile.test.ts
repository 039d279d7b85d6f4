/**
 * Untrusted text never becomes a command. Every string argument of start_session and send_message carries
 * values that tmux or a shell would act on (`;`, `#{…}`, `#(…)`, `$(…)`, backquotes, quotes, backslashes,
 * newlines, a leading `-`); each must reach Claude exactly (its argv and cwd read from /proc, its environment
 * from /proc/<pid>/environ, the prompt from its transcript) or be refused, and no sentinel file may appear.
 */
import {
  type Dirent,
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  can,
  CLI,
  connect,
  contractKinds,
  FAKE_CLAUDE,
  makeWorld,
  processesIn,
  until,
  type Mcp,
  type World,
} from "../helpers/harness.js";

const BACKENDS = await contractKinds();

interface ArgvLine {
  pid: number;
  argv: string[];
  cwd: string;
  session_id: string;
}

/** Every file under `dir` a hostile value would have created (exactly "pwned-<word>"; the test's own directories named after the values end in ")" or "`"). */
function sentinels(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: Dirent[] = [];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (e) {
      // A lock directory of the store comes and goes while the server works.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (/^pwned-[a-z]+$/.test(e.name)) out.push(p);
      if (e.isDirectory() && !e.isSymbolicLink()) walk(p);
    }
  };
  walk(dir);
  return out;
}

function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
}

function environ(pid: number): Map<string, string> {
  const m = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) m.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return m;
}

describe.each(BACKENDS)("hostile arguments (%s)", (backend) => {
  let w: World;
  let m: Mcp;
  let argvLog: string;
  beforeAll(async () => {
    w = makeWorld({ MAX_CONCURRENT_SESSIONS: "30", CLAUDE_SESSIONS_BACKEND: backend });
    argvLog = join(w.root, "argv.jsonl");
    m = await connect(w, { FAKE_CLAUDE_ARGV_LOG: argvLog });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  const values = () => [
    "semi;",
    "esc\\;",
    "fmt#{pane_id}x#{session_name}",
    `run#(touch ${w.root}/pwned-fmt)`,
    `sub$(touch ${w.root}/pwned-sub)`,
    `tick\`touch ${w.root}/pwned-tick\``,
    `quote'"q`,
    "back\\slash\\ end",
    "new\nline",
    "-p",
    "--dangerously-skip-permissions",
    "dollar$HOME${PATH}",
  ];

  it("every string argument of start_session and the prompt reach Claude byte-exact; nothing runs", async () => {
    const vals = values();
    const started = await Promise.all(
      vals.map(async (v, i) => {
        // The value is the last component of the cwd (and of an add_dir and the log file's name).
        const cwd = join(w.work, `case-${i}`, v);
        mkdirSync(cwd, { recursive: true });
        const logFile = join(w.work, `logs-${i}`, `out-${v}`);
        mkdirSync(dirname(logFile), { recursive: true });
        const args: Record<string, unknown> = {
          cwd,
          prompt: v,
          append_system_prompt: v,
          // A team or teammate name has no control characters (the schema says so; teams.test.ts checks the refusal).
          ...(/[\x00-\x1f\x7f-\x9f]/.test(v) ? {} : { team_name: v, teammate_name: v }),
          add_dirs: [cwd],
          allowed_tools: [v],
          disallowed_tools: [v],
          env: { HOSTILE_VALUE: v },
          log_file: logFile,
          // A model name has no whitespace (the schema says so); the others go as they are.
          ...(/\s/.test(v) ? {} : { model: v }),
        };
        const r = await m.callRaw<{ session_id: string; claude_session_id: string }>("start_session", args, { timeout: 60_000 });
        return { v, i, cwd, logFile, args, r };
      }),
    );
    const lines = readFileSync(argvLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ArgvLine);
    for (const { v, cwd, logFile, args, r } of started) {
      expect(r.ok, `${JSON.stringify(v)}: ${r.text}`).toBe(true);
      const claudeId = r.data.claude_session_id as string;
      const line = lines.find((l) => l.session_id === claudeId);
      expect(line, JSON.stringify(v)).toBeDefined();
      const pid = line!.pid;
      // What the process really got, read from the kernel.
      const argv = cmdline(pid);
      const at = argv.indexOf(FAKE_CLAUDE);
      const settings = join(w.stateDir, r.data.session_id as string, "settings.json");
      // A team member's own MCP server (issue 25): a file the server wrote, whatever the team's name.
      const memberConfig = join(w.stateDir, r.data.session_id as string, "member-mcp.json");
      // Headless: the Agent SDK builds the argv (the appended system prompt goes in its initialize request).
      if (backend === "headless") {
        expect(argv.slice(at + 1), JSON.stringify(v)).toEqual([
          ...["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"],
          ...(args.model !== undefined ? [`--model=${v}`] : []),
          "--permission-prompt-tool=stdio",
          `--allowedTools=${v}`,
          `--disallowedTools=${v}`,
          "--permission-mode=default",
          `--add-dir=${cwd}`,
          `--session-id=${claudeId}`,
          ...(args.team_name !== undefined ? ["--mcp-config", memberConfig] : []),
          ...["--settings", settings],
        ]);
      } else
        expect(argv.slice(at + 1), JSON.stringify(v)).toEqual([
          `--session-id=${claudeId}`,
          `--settings=${settings}`,
          ...(args.model !== undefined ? [`--model=${v}`] : []),
          // Never left to the CLI's own default (2.1.331's is auto mode).
          "--permission-mode=default",
          `--append-system-prompt=${v}`,
          `--add-dir=${cwd}`,
          `--allowedTools=${v}`,
          `--disallowedTools=${v}`,
          ...(args.team_name !== undefined ? [`--mcp-config=${memberConfig}`] : []),
          // The first prompt is the CLI's positional argument (issue #23): after `--`, so no value is an option.
          "--",
          v,
        ]);
      expect(readlinkSync(`/proc/${pid}/cwd`), JSON.stringify(v)).toBe(realpathSync(cwd));
      const env = environ(pid);
      expect(env.get("HOSTILE_VALUE")).toBe(v);
      expect(env.get("DISABLE_AUTOUPDATER")).toBe("1");
      expect(env.get("CLAUDE_TEAM_NAME")).toBe(args.team_name);
      expect(env.get("CLAUDE_TEAMMATE_NAME")).toBe(args.teammate_name);
      // The log file is new, ours alone, at exactly that path.
      expect(statSync(logFile).mode & 0o777).toBe(0o600);
      // The first prompt arrived as a prompt, exactly.
      const t = await m.call("stream_output", {
        session_id: r.data.session_id,
        mode: "transcript",
        follow: true,
        timeout_ms: 5000,
      });
      expect(t.data.items?.find((x) => x.role === "user")?.text, JSON.stringify(v)).toBe(v);
    }
    expect(sentinels(w.root)).toEqual([]);
    await Promise.all(started.map(({ r }) => m.call("kill_session", { session_id: r.data.session_id, save_state: false })));
  });

  it("hostile messages arrive exactly, or (a terminal's input box) are refused with INVALID_ARGUMENT and nothing typed; the session stays usable", async () => {
    const cwd = w.dir("messages");
    const s = await m.call("start_session", { cwd });
    expect(s.ok, s.text).toBe(true);
    const id = s.data.session_id as string;
    const refused = [
      `!touch ${w.root}/pwned-bang`,
      `\x1b[201~!touch ${w.root}/pwned-paste`,
      "hello\x1b[201~\r/exit",
      "please read this\x1b[201~\rand this",
      `${"a".repeat(699)}\x1b[201~!touch ${w.root}/pwned-boundary`,
      "stop\x03now",
      "ends with a backslash\\",
      "clear\x15line",
    ];
    for (const msg of refused) {
      const r = await m.call("send_message", { session_id: id, message: msg });
      if (backend === "headless") {
        // No input box: a stream-json message carries these exactly (runners/prompt.ts), and '!' is no mode there.
        expect(r.ok, `${JSON.stringify(msg)}: ${r.text}`).toBe(true);
        expect(r.data.response, JSON.stringify(msg)).toBe(`FAKE REPLY: ${msg}`);
      } else expect(r.error?.code, JSON.stringify(msg)).toBe("INVALID_ARGUMENT");
    }
    const delivered = [
      ` !touch ${w.root}/pwned-spaced`,
      `#123 is not a mode (it was memory mode in Claude Code 1.x)`,
      `\t#not memory`,
      "semi; #{pane_id} #(true) $(true) `true` '\"\\ end",
      "line one\r\nline two\rline three",
      "-p --help",
    ];
    for (const msg of delivered) {
      const r = await m.call("send_message", { session_id: id, message: msg });
      expect(r.ok, r.text).toBe(true);
      // A terminal's box turns CR and CR LF into new lines; a stream-json message keeps them.
      const expected = backend === "headless" ? msg : msg.replace(/\r\n?/g, "\n");
      expect(r.data.response, JSON.stringify(msg)).toBe(`FAKE REPLY: ${expected}`);
    }
    expect(sentinels(w.root)).toEqual([]);
    const ok = await m.call("send_message", { session_id: id, message: "still here?" });
    expect(ok.data.response).toBe("FAKE REPLY: still here?");
    await m.call("kill_session", { session_id: id, save_state: false });
  });

  it("bash mode runs a command only with the operator's switch", async () => {
    const cwd = w.dir("bash");
    const s = await m.call("start_session", { cwd });
    const id = s.data.session_id as string;
    const denied = await m.call("send_message", { session_id: id, message: `touch ${w.root}/pwned-denied`, bash_mode: true });
    expect(denied.error?.code).toBe("PERMISSION_DENIED");
    expect(denied.error?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_BASH_MODE=1");
    await m.call("kill_session", { session_id: id, save_state: false });

    const m2 = await connect(w, { CLAUDE_SESSIONS_ALLOW_BASH_MODE: "1" });
    const s2 = await m2.call("start_session", { cwd });
    const id2 = s2.data.session_id as string;
    const made = join(cwd, "made-by-bash-mode");
    const r = await m2.call("send_message", { session_id: id2, message: `touch ${made}`, bash_mode: true });
    if (can(backend, "keys")) {
      expect(r.ok, r.text).toBe(true);
      await until(() => existsSync(made), 5000);
    } else {
      // Bash mode is a feature of the interactive screen: a headless session refuses it, switch or not.
      expect(r.error?.code).toBe("INVALID_ARGUMENT");
      expect(existsSync(made)).toBe(false);
    }
    // The session still takes prompts afterwards.
    expect((await m2.call("send_message", { session_id: id2, message: "after" })).data.response).toBe("FAKE REPLY: after");
    await m2.call("kill_session", { session_id: id2, save_state: false });
    await m2.close();
    expect(sentinels(w.root)).toEqual([]);
  });

  it("log_file is a new file of the session's own: existing files, links, missing or foreign directories are refused", async () => {
    const dir = w.dir("logfile");
    const secret = join(dir, "secret.txt");
    writeFileSync(secret, "TOP-SECRET-CONTENT\n", { mode: 0o600 });
    const link = join(dir, "link.log");
    symlinkSync(secret, link);
    const dangling = join(dir, "dangling.log");
    symlinkSync(join(dir, "not-there"), dangling);
    const foreign = join(w.root, "foreign");
    mkdirSync(foreign);
    // A directory that is not the server's user's: as root, give it away; otherwise "/" is root's.
    const isRoot = process.getuid?.() === 0;
    if (isRoot) chownSync(foreign, 65534, 65534);
    const foreignLog = isRoot ? join(foreign, "x.log") : "/claude-sessions-test.log";
    const before = readFileSync(join(w.stateDir, "state.json"), "utf8");
    for (const [logFile, why] of [
      [secret, /already exists/],
      [link, /already exists/],
      [dangling, /already exists/],
      [join(dir, "missing", "x.log"), /does not exist/],
      ["relative.log", /absolute/],
      [foreignLog, /belongs to uid/],
    ] as const) {
      const r = await m.call("start_session", { cwd: dir, log_file: logFile });
      expect(r.error?.code, logFile).toBe("INVALID_ARGUMENT");
      expect(r.error?.message, logFile).toMatch(why);
      expect(r.text).not.toContain("TOP-SECRET");
    }
    expect(readFileSync(join(w.stateDir, "state.json"), "utf8")).toBe(before);
    expect(processesIn(dir)).toEqual([]);
    expect(readFileSync(secret, "utf8")).toBe("TOP-SECRET-CONTENT\n");

    // A good one: created 0600, read back through stream_output; replaced later by a link, it is not read.
    const good = join(dir, "session.log");
    const s = await m.call("start_session", { cwd: dir, log_file: good });
    expect(s.ok, s.text).toBe(true);
    expect(statSync(good).mode & 0o777).toBe(0o600);
    const id = s.data.session_id as string;
    await m.call("send_message", { session_id: id, message: "write something" });
    const log = await m.call("stream_output", { session_id: id, mode: "log" });
    expect(log.data.text).toContain("write something");
    await m.call("kill_session", { session_id: id });
    spawnSync("rm", ["-f", good]);
    symlinkSync(secret, good);
    const leak = await m.call("stream_output", { session_id: id, mode: "log", cursor: "0" });
    expect(leak.ok).toBe(false);
    expect(leak.text).not.toContain("TOP-SECRET");
    const resumed = await m.call("resume_session", { session_id: id });
    expect(resumed.error?.code).toBe("INVALID_ARGUMENT");
    expect(readFileSync(secret, "utf8")).toBe("TOP-SECRET-CONTENT\n");
  });

  it("env cannot choose the programs hooks and scripts run: such variables are refused, and allowed by the operator they still pick none", async () => {
    // Programs of the caller's that record being run, then do the real job (so a session works either way).
    const planted = join(w.root, `planted-${backend}`);
    mkdirSync(planted, { recursive: true });
    for (const name of ["flock", "paste", "cat", "sh", "sed", "date", "sleep", "rm", "dirname", "bash"]) {
      const real = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
      writeFileSync(join(planted, name), `#!/bin/sh\n: > '${w.root}/pwned-${name}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    }
    const path = `${planted}:${process.env.PATH ?? ""}`;
    const cwd = w.dir(`env-gate-${backend}`);
    for (const env of [
      { PATH: path },
      { LD_PRELOAD: "/tmp/x.so" },
      { NODE_OPTIONS: "--require /tmp/x.js" },
      { BASH_ENV: "/tmp/x" },
      { HOME: w.root },
      { CLAUDE_CONFIG_DIR: w.root },
      { SHELL: "/tmp/x" },
      { GIT_CONFIG_GLOBAL: "/tmp/x" },
      { npm_config_script_shell: "/tmp/x" },
      { PYTHONSTARTUP: "/tmp/x" },
      { DYLD_INSERT_LIBRARIES: "/tmp/x" },
    ]) {
      const name = Object.keys(env)[0]!;
      for (const [tool, args] of [
        ["start_session", { cwd, env }],
        ["run_task", { cwd, env, prompt: "hi", backend }],
      ] as const) {
        const r = await m.callRaw(tool, args);
        expect(r.error?.code, `${tool} ${name}`).toBe("PERMISSION_DENIED");
        expect(r.error?.message, name).toContain(name);
        expect(r.error?.suggestion, name).toContain(`CLAUDE_SESSIONS_ALLOW_ENV=${name}`);
      }
    }
    expect(processesIn(cwd)).toEqual([]);
    // resume_session too (a session that ended).
    const ok = await m.callOk("start_session", { cwd, env: { GIT_AUTHOR_NAME: "a caller", PLAIN: "1" } });
    await m.callOk("kill_session", { session_id: ok.session_id });
    const rs = await m.call("resume_session", { session_id: ok.session_id, env: { PATH: path } });
    expect(rs.error?.code).toBe("PERMISSION_DENIED");

    // Allowed by the operator, PATH reaches Claude, and still no hook, permission answer or exit record runs the caller's programs.
    const m2 = await connect(w, { CLAUDE_SESSIONS_ALLOW_ENV: "PATH" });
    try {
      const s = await m2.callOk("start_session", { cwd, env: { PATH: path } });
      const asked = await m2.callOk("send_message", { session_id: s.session_id, message: "FAKE_BASH:true" });
      expect(asked).toMatchObject({ final_state: "waiting_for_permission" });
      await m2.callOk("respond_permission", { session_id: s.session_id, decision: "allow" });
      expect(await m2.callOk("wait_for_completion", { session_id: s.session_id, timeout_ms: 10_000 })).toMatchObject({
        completed: true,
      });
      const claudePid = processesIn(cwd).find((pid) => cmdline(pid).includes(FAKE_CLAUDE))!;
      expect(environ(claudePid).get("PATH")).toBe(path);
      await m2.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m2.close();
    }
    expect(sentinels(w.root)).toEqual([]);
  });

  it("a script of the state directory that others could change is refused before it runs", async () => {
    const launch = join(w.stateDir, "bin", backend === "tmux" ? "launch.sh" : "hook.sh");
    chmodSync(launch, 0o770);
    try {
      const r = await m.call("start_session", { cwd: w.dir("tampered") });
      if (backend === "tmux") {
        expect(r.error?.code, r.text).toBe("PERMISSION_DENIED");
        expect(r.error?.message).toContain(launch);
        expect(processesIn(w.dir("tampered"))).toEqual([]);
      } else {
        // pty sessions do not run launch.sh; hook.sh (their exit record) is checked when an event is appended.
        expect(r.error?.code, r.text).toBe("PERMISSION_DENIED");
      }
    } finally {
      chmodSync(launch, 0o700);
    }
  });
});

describe("what only the operator can allow: stdio MCP servers, untrusted folders headless, trust_workspace", () => {
  let w: World;
  let m: Mcp;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  /** A folder whose project settings would run a program at SessionStart. */
  function hookedFolder(name: string): string {
    const dir = w.dir(name);
    mkdirSync(join(dir, ".claude"), { recursive: true });
    const hooks = {
      hooks: { SessionStart: [{ matcher: "*", hooks: [{ type: "command", command: `touch ${w.root}/pwned-hook` }] }] },
    };
    writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify(hooks));
    return dir;
  }

  it("a headless stdio MCP server (a program) needs the operator's switch or list; http and sse servers start nothing here", async () => {
    const cwd = w.dir("mcp");
    const stdio = { evil: { command: "/bin/sh", args: ["-c", `touch ${w.root}/pwned-mcp`] } };
    for (const [tool, extra] of [
      ["start_session", {}],
      ["run_task", { prompt: "hi" }],
    ] as const) {
      const r = await m.call(tool, { cwd, backend: "headless", mcp_servers: stdio, ...extra });
      expect(r.error?.code, tool).toBe("PERMISSION_DENIED");
      expect(r.error?.suggestion, tool).toContain("CLAUDE_SESSIONS_ALLOW_MCP_SERVERS=1");
      expect(r.error?.suggestion, tool).toContain("CLAUDE_SESSIONS_MCP_COMMANDS");
    }
    // http/sse pass this gate (this folder is untrusted, so the start stops at the next one).
    const http = await m.call("start_session", {
      cwd,
      backend: "headless",
      mcp_servers: { web: { type: "http", url: "http://127.0.0.1:9/mcp" } },
    });
    expect(http.error?.code, http.text).toBe("STARTUP_BLOCKED");
    // A listed command runs by its resolved path; anything else, or its env choosing what it loads, is refused.
    const listed = await connect(w, { CLAUDE_SESSIONS_MCP_COMMANDS: "true" });
    try {
      const other = await listed.call("start_session", { cwd, backend: "headless", mcp_servers: stdio });
      expect(other.error?.code).toBe("PERMISSION_DENIED");
      const env = await listed.call("start_session", {
        cwd,
        backend: "headless",
        mcp_servers: { t: { command: "true", env: { LD_PRELOAD: `${w.root}/x.so` } } },
      });
      expect(env.error?.code).toBe("PERMISSION_DENIED");
      expect(env.error?.message).toContain("mcp_servers.t.env LD_PRELOAD");
      const ok = await listed.call("start_session", { cwd, backend: "headless", mcp_servers: { t: { command: "true" } } });
      expect(ok.error?.code, ok.text).toBe("STARTUP_BLOCKED");
    } finally {
      await listed.close();
    }
    expect(processesIn(cwd)).toEqual([]);
    expect(sentinels(w.root)).toEqual([]);
  });

  it("a headless session in a folder Claude Code does not trust stops with the trust screen's error and way out (start, run_task, resume)", async () => {
    const cwd = hookedFolder("untrusted");
    const before = readFileSync(join(w.stateDir, "state.json"), "utf8");
    for (const [tool, extra] of [
      ["start_session", {}],
      ["run_task", { prompt: "hi" }],
    ] as const) {
      const r = await m.call(tool, { cwd, backend: "headless", ...extra });
      expect(r.error?.code, tool).toBe("STARTUP_BLOCKED");
      expect(r.error?.message, tool).toContain(cwd);
      expect(r.error?.suggestion, tool).toContain("trust_workspace: true");
    }
    expect(readFileSync(join(w.stateDir, "state.json"), "utf8")).toBe(before);
    // A terminal session of that folder (it answers the trust screen itself) cannot be taken over headless either.
    const t = await m.callOk("start_session", { cwd: w.dir("ended") });
    await m.callOk("kill_session", { session_id: t.session_id });
    const r = await m.call("resume_session", { session_id: t.session_id, backend: "headless", cwd });
    expect(r.error?.code).toBe("STARTUP_BLOCKED");
    expect(processesIn(cwd)).toEqual([]);
    expect(sentinels(w.root)).toEqual([]);
  });

  it("the operator can take trust_workspace away from callers (CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE=0)", async () => {
    const cwd = w.dir("no-trust");
    const m2 = await connect(w, { CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE: "0" });
    try {
      for (const [tool, args] of [
        ["start_session", { cwd, trust_workspace: true }],
        ["start_session", { cwd, trust_workspace: true, backend: "headless" }],
        ["run_task", { cwd, trust_workspace: true, prompt: "hi" }],
      ] as const) {
        const r = await m2.call(tool, args);
        expect(r.error?.code, tool).toBe("PERMISSION_DENIED");
        expect(r.error?.suggestion, tool).toContain("CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE");
      }
      const s = await m2.callOk("start_session", { cwd });
      await m2.callOk("kill_session", { session_id: s.session_id });
      const r = await m2.call("resume_session", { session_id: s.session_id, trust_workspace: true });
      expect(r.error?.code).toBe("PERMISSION_DENIED");
    } finally {
      await m2.close();
    }
    // Without the switch, the fake's trust screen is answered as before.
    const ok = await m.call("start_session", { cwd, env: { FAKE_CLAUDE_SCREEN: "trust" }, trust_workspace: true });
    expect(ok.ok, ok.text).toBe(true);
    await m.call("kill_session", { session_id: ok.data.session_id });
  });
});

describe("the state directory is ours or refused", () => {
  const runLs = (stateDir: string, home: string) =>
    spawnSync(process.execPath, [CLI, "ls"], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        CLAUDE_SESSIONS_DIR: stateDir,
        CLAUDE_SESSIONS_TMUX_SOCKET: "cs-test-none",
      },
    });

  it("a group- or world-writable state directory stops the server with the fix named", () => {
    const w = makeWorld();
    try {
      mkdirSync(w.stateDir, { mode: 0o777 });
      chmodSync(w.stateDir, 0o777);
      const r = runLs(w.stateDir, w.home);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain("cannot be trusted");
      expect(r.stderr).toContain("chmod 700");
      expect(existsSync(join(w.stateDir, "bin"))).toBe(false);
      chmodSync(w.stateDir, 0o700);
      expect(runLs(w.stateDir, w.home).status).toBe(0);
    } finally {
      w.cleanup();
    }
  });

  it("a state directory owned by another user is refused (as root: given away; otherwise: a root-owned one)", () => {
    const w = makeWorld();
    try {
      let dir = "/";
      if (process.getuid?.() === 0) {
        mkdirSync(w.stateDir, { mode: 0o700 });
        chownSync(w.stateDir, 65534, 65534);
        dir = w.stateDir;
      }
      const r = runLs(dir, w.home);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/cannot be trusted: it belongs to uid \d+/);
    } finally {
      w.cleanup();
    }
  });
});

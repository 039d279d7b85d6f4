import { describe, expect, it } from "vitest";
import { buildClaudeArgs, childEnv, usesDoppler, wrapWithDoppler } from "../../src/claude/launch.js";
import { headlessEnv } from "../../src/runners/headless/options.js";
import { encodeHandoff } from "../../src/runners/terminal/tmux/launcher.js";
import { AFTER_PROMPT, CALLBACK_EVENTS, HEADLESS_HOOKS, hooksSettings } from "../../src/claude/hooks.js";
import { orderedHookCommand, promptHookCommand } from "../../src/claude/hooks.js";
import { hookScript, permissionScript } from "../../src/claude/scripts.js";
import { launchScript } from "../../src/runners/terminal/tmux/launcher.js";
import { captureScript } from "../../src/runners/terminal/capture.js";
import { resolveToolPaths, toolPaths } from "../../src/util/proc/tools.js";
import { claudeCandidates } from "../../src/claude/discover.js";
import { transcriptPath } from "../../src/claude/transcript.js";
import { ARGV_PROMPT_MAX_BYTES, terminalPlan } from "../../src/runners/terminal/runner.js";
import type { TerminalHost, TerminalPlan } from "../../src/runners/host.js";
import type { LaunchRequest } from "../../src/runners/runner.js";

describe("argv builders", () => {
  it("a new session: --session-id, --settings and the options, each one --flag=value argument", () => {
    expect(
      buildClaudeArgs({ kind: "new", claudeSessionId: "u1" }, "/s/settings.json", {
        model: "sonnet",
        permission_mode: "acceptEdits",
        append_system_prompt: "be brief; $(rm -rf ~)",
        add_dirs: ["/a", "/b c", "-p"],
        allowed_tools: ["Bash(git:*)", "Edit"],
        disallowed_tools: ["WebFetch"],
      }),
    ).toEqual([
      "--session-id=u1",
      "--settings=/s/settings.json",
      "--model=sonnet",
      "--permission-mode=acceptEdits",
      "--append-system-prompt=be brief; $(rm -rf ~)",
      "--add-dir=/a",
      "--add-dir=/b c",
      "--add-dir=-p",
      "--allowedTools=Bash(git:*),Edit",
      "--disallowedTools=WebFetch",
    ]);
  });

  it("resume keeps the id; fork chooses the new one", () => {
    expect(buildClaudeArgs({ kind: "resume", resumeId: "old" }, "/s", {})).toEqual(["--resume=old", "--settings=/s"]);
    expect(buildClaudeArgs({ kind: "resume", resumeId: "old", fork: { newId: "new" } }, "/s", {})).toEqual([
      "--resume=old",
      "--fork-session",
      "--session-id=new",
      "--settings=/s",
    ]);
  });

  it("doppler wraps in argv form with --forward-signals, never --command", () => {
    expect(wrapWithDoppler(["/bin/claude", "--session-id", "u"], { path: "/bin/doppler", project: "p", config: "dev" })).toEqual([
      "/bin/doppler",
      "run",
      "--forward-signals",
      "--project",
      "p",
      "--config",
      "dev",
      "--",
      "/bin/claude",
      "--session-id",
      "u",
    ]);
    expect(wrapWithDoppler(["c"], { path: "d" })).toEqual(["d", "run", "--forward-signals", "--", "c"]);
  });

  it("the child environment drops what breaks a nested Claude Code and adds the session's own", () => {
    const env = childEnv(
      {
        PATH: "/bin",
        CLAUDECODE: "1",
        CLAUDE_CODE_ENTRYPOINT: "cli",
        TMUX: "/tmp/x",
        TERM: "xterm",
        "BASH_FUNC_x%%": "() {}",
        KEEP: "1",
      },
      { SECRET: "s3cr3t" },
    );
    expect(env).toEqual({ PATH: "/bin", TERM: "xterm", KEEP: "1", SECRET: "s3cr3t" });
  });

  it("the server's own secrets stay with it: DOPPLER_* only for a session under doppler run, never its HTTP token", () => {
    const base = { PATH: "/bin", DOPPLER_TOKEN: "dp.st.x", DOPPLER_PROJECT: "p", CLAUDE_SESSIONS_TOKEN: "t" };
    expect(childEnv(base, {})).toEqual({ PATH: "/bin" });
    expect(childEnv(base, {}, { doppler: true })).toEqual({ PATH: "/bin", DOPPLER_TOKEN: "dp.st.x", DOPPLER_PROJECT: "p" });
    expect(headlessEnv({ base_env: base, env: {} })).toEqual({ PATH: "/bin" });
    expect(usesDoppler(wrapWithDoppler(["/bin/claude", "--session-id=u"], { path: "/bin/doppler" }))).toBe(true);
    expect(usesDoppler(["/bin/claude", "--session-id=u"])).toBe(false);
  });

  it("the launcher's hand-off file: cwd, events, argv and env as NUL-terminated tagged records, any other byte kept", () => {
    expect(
      encodeHandoff({
        cwd: "/w/x#(y);",
        eventsPath: "/s/e",
        argv: ["/bin/claude", "--model=a;", "-p", "line\nbreak"],
        env: { A: "1", B: "two\nlines 'q' \"d\" $(x)" },
      }),
    ).toBe("C:/w/x#(y);\0E:/s/e\0A:/bin/claude\0A:--model=a;\0A:-p\0A:line\nbreak\0V:A=1\0V:B=two\nlines 'q' \"d\" $(x)\0");
    expect(() => encodeHandoff({ cwd: "/", eventsPath: "/e", argv: ["/x", "a\0b"], env: {} })).toThrow(/NUL/);
    expect(() => encodeHandoff({ cwd: "/", eventsPath: "/e", argv: ["/x"], env: { "A B": "1" } })).toThrow(/variable name/);
    expect(() => encodeHandoff({ cwd: "/", eventsPath: "/e", argv: [], env: {} })).toThrow(/argv is empty/);
  });

  it("hook settings subscribe every event to one cheap locked append, the path quoted", () => {
    const s = hooksSettings("/state/it's/events.jsonl") as {
      hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>>;
    };
    expect(Object.keys(s.hooks)).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PermissionRequest",
      "PostToolUse",
      "Notification",
      "Stop",
      "StopFailure",
      "SessionEnd",
      "PermissionDenied",
    ]);
    const t = toolPaths();
    expect(t.flock).toMatch(/^\/.*\/flock$/);
    expect(t.paste).toMatch(/^\/.*\/paste$/);
    expect(s.hooks.Stop![0]!.hooks[0]!.command).toBe(
      `umask 077; exec '${t.flock}' -w 10 '/state/it'\\''s/events.jsonl.lock' '${t.paste}' -s -d '\\0' /dev/null - >> '/state/it'\\''s/events.jsonl' 2>/dev/null`,
    );
    expect(JSON.stringify(s)).not.toContain('"async"');
    // Issue 38, headless (the Agent SDK): the turn's events go to the SDK's in-process callbacks (HeadlessSession),
    // so the CLI forks no hook for them; the process's end, which no callback receives, stays a command. Its start is
    // written by HeadlessSession when the CLI answers initialize: only /clear's and /compact's SessionStart run a command.
    const headless = hooksSettings("/state/it's/events.jsonl", undefined, HEADLESS_HOOKS);
    expect(Object.keys(headless.hooks)).toEqual(["SessionStart", "SessionEnd"]);
    expect(
      (headless.hooks.SessionStart as Array<{ matcher: string; hooks: Array<{ command: string; async?: boolean }> }>).map((g) => [
        g.matcher,
        g.hooks[0]!.async === true,
        g.hooks[0]!.command,
      ]),
    ).toEqual([["clear|compact", false, s.hooks.Stop![0]!.hooks[0]!.command]]);
    expect(CALLBACK_EVENTS).toEqual(Object.keys(s.hooks).filter((e) => e !== "SessionStart" && e !== "SessionEnd"));
    expect(headless.permissions).toEqual(hooksSettings("/state/it's/events.jsonl").permissions);
    // Issue 38, the interactive CLI (tmux, pty): a start's or a resume's SessionStart runs in the background (the
    // first prompt does not wait for it); /clear's and /compact's stay in line, as every other event does.
    const bg = hooksSettings("/state/it's/events.jsonl", undefined, { backgroundStart: true }) as typeof s;
    const starts = (
      bg.hooks.SessionStart as unknown as Array<{ matcher: string; hooks: Array<{ command: string; async?: boolean }> }>
    ).map((g) => [g.matcher, g.hooks[0]!.async === true, g.hooks[0]!.command]);
    expect(starts).toEqual([
      ["startup|resume", true, s.hooks.Stop![0]!.hooks[0]!.command],
      ["clear|compact", false, s.hooks.Stop![0]!.hooks[0]!.command],
    ]);
    for (const ev of Object.keys(bg.hooks).filter((e) => e !== "SessionStart")) expect(bg.hooks[ev]).toEqual(s.hooks[ev]);
    // Issue 38, the interactive CLI: UserPromptSubmit in the background too, and the turn's events that can follow it
    // at once wait for its line (claude/hooks.ts); the rest as before.
    const bp = hooksSettings("/state/it's/events.jsonl", undefined, {
      backgroundStart: true,
      backgroundPrompt: true,
    }) as unknown as {
      hooks: Record<string, Array<{ matcher: string; hooks: Array<{ command: string; async?: boolean }> }>>;
    };
    const entry = (ev: string) => bp.hooks[ev]![0]!.hooks[0]!;
    expect(entry("UserPromptSubmit")).toEqual({
      type: "command",
      command: promptHookCommand("/state/it's/events.jsonl", t),
      async: true,
    });
    for (const ev of AFTER_PROMPT)
      expect(entry(ev)).toEqual({ type: "command", command: orderedHookCommand("/state/it's/events.jsonl", t) });
    expect(AFTER_PROMPT).toEqual(["PreToolUse", "PermissionDenied", "Stop", "StopFailure"]);
    for (const ev of Object.keys(bp.hooks).filter((e) => e !== "UserPromptSubmit" && !AFTER_PROMPT.includes(e as never)))
      expect(bp.hooks[ev]).toEqual(bg.hooks[ev]);
  });

  it("the server's scripts name every program they call by an absolute path (a caller's PATH picks none of them)", () => {
    const t = resolveToolPaths("/nowhere:/usr/bin:/bin");
    for (const [name, path] of Object.entries(t)) expect(path, name).toMatch(new RegExp(`^/.*/${name}$`));
    const scripts = { hook: hookScript(t), permission: permissionScript(t), launch: launchScript(t), capture: captureScript(t) };
    // A program called by its bare name would be looked up on PATH (shell builtins such as printf are not programs).
    for (const [name, text] of Object.entries(scripts)) {
      expect(text.split("\n")[0], name).toMatch(/^#!\/\S+$/);
      for (const prog of Object.keys(t)) {
        // A program name only ever right after a quote and a slash: '…/flock'.
        const bare = new RegExp(`(^|[\\s|;&(]|\\$\\()${prog}(?=\\s)`, "m");
        expect(
          bare.test(
            text
              .split("\n")
              .slice(1)
              .filter((l) => !l.startsWith("#"))
              .join("\n"),
          ),
          `${name} calls ${prog} by name`,
        ).toBe(false);
      }
    }
  });

  it("discovery looks where the spec says, in order", () => {
    const c = claudeCandidates({ PATH: "/p1:/p2" }, "/h");
    expect(c.slice(0, 4)).toEqual(["/p1/claude", "/p2/claude", "/usr/local/bin/claude", "/usr/bin/claude"]);
    expect(c).toEqual(
      expect.arrayContaining([
        "/h/.npm-global/bin/claude",
        "/h/.yarn/bin/claude",
        "/h/.volta/bin/claude",
        "/h/.claude/local/claude",
        "/h/.local/bin/claude",
      ]),
    );
  });

  it("transcripts live where Claude Code puts them", () => {
    expect(transcriptPath("/h/.claude", "/home/user/my project", "id")).toBe(
      "/h/.claude/projects/-home-user-my-project/id.jsonl",
    );
  });
});

describe("the first prompt on the command line (issue #23)", () => {
  // A host that records what it was asked to spawn: the plan is pure but for its spawn.
  const spawned: TerminalPlan[] = [];
  const host = {
    kind: "tmux",
    survivesRestart: true,
    spawn: (p: TerminalPlan) => (spawned.push(p), Promise.resolve({ pid: 1 })),
  } as unknown as TerminalHost;
  const req = (prompt?: string, doppler?: { path: string }): LaunchRequest => ({
    id: "s1",
    dir: "/state/s1",
    cwd: "/w",
    settingsPath: "/state/s1/settings.json",
    eventsPath: "/state/s1/events.jsonl",
    rawLogPath: "/state/s1/output.log",
    cols: 200,
    rows: 50,
    claude: "/bin/claude",
    mode: { kind: "new", claudeSessionId: "u1" },
    claudeOptions: {},
    env: {},
    options: {},
    ...(prompt !== undefined ? { prompt } : {}),
    ...(doppler ? { doppler } : {}),
  });
  const argvOf = async (r: LaunchRequest) => {
    const plan = terminalPlan(host, r);
    await plan.spawn({ live: undefined as never });
    return { plan, argv: spawned.at(-1)!.argv };
  };

  it("goes last, after --, exactly as given; the record's command leaves it out", async () => {
    const prompt = "--dangerously-skip-permissions\n\ttab ; $(x) ";
    const { plan, argv } = await argvOf(req(prompt));
    expect(plan.carriesPrompt).toBe(true);
    expect(argv).toEqual(["/bin/claude", "--session-id=u1", "--settings=/state/s1/settings.json", "--", prompt]);
    expect(plan.command).toEqual(["/bin/claude", "--session-id=u1", "--settings=/state/s1/settings.json"]);
  });

  it("under doppler it is still claude's last argument", async () => {
    const { argv } = await argvOf(req("hi", { path: "/bin/doppler" }));
    expect(argv).toEqual([
      "/bin/doppler",
      "run",
      "--forward-signals",
      "--",
      "/bin/claude",
      "--session-id=u1",
      "--settings=/state/s1/settings.json",
      "--",
      "hi",
    ]);
  });

  it(`a prompt over ${ARGV_PROMPT_MAX_BYTES} bytes, or none, is not carried (it is pasted)`, async () => {
    for (const r of [req("日".repeat(Math.ceil(ARGV_PROMPT_MAX_BYTES / 3) + 1)), req()]) {
      const { plan, argv } = await argvOf(r);
      expect(plan.carriesPrompt).toBe(false);
      expect(argv).not.toContain("--");
    }
    expect((await argvOf(req("a".repeat(ARGV_PROMPT_MAX_BYTES)))).plan.carriesPrompt).toBe(true);
  });
});

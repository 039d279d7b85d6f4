// Drives the fake `claude` (tests/fixtures/bin/claude) in a real tmux server on a private socket,
// the way the server drives the real CLI: load-buffer + paste-buffer -p + a separate Enter, hooks
// appending their payloads to a file, transcripts under a temporary HOME.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const FAKE = fileURLToPath(new URL("../fixtures/bin/claude", import.meta.url));
const SOCKET = `cs-fake-test-${randomBytes(6).toString("hex")}`;

const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-fake-claude-")));
const home = join(root, "home");
const cwd = join(root, "project");
const hookLog = join(root, "hooks.jsonl");
const settingsPath = join(root, "settings.json");
const projectDir = join(home, ".claude", "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));

// A small, explicit environment: never inherit CLAUDECODE, TMUX or FAKE_* from the caller.
const baseEnv: Record<string, string> = {
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
  HOME: home,
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "xterm-256color",
  TMPDIR: tmpdir(),
  TMUX_TMPDIR: root, // the socket file goes away with the temp dir (tmux 3.3a leaves it behind on kill-server)
};

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: opts.env ?? baseEnv, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.on("error", () => {});
    child.stdin.end(opts.input ?? "");
  });
}

async function tmux(args: string[], input?: string): Promise<string> {
  const r = await run("tmux", ["-L", SOCKET, "-f", "/dev/null", ...args], input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`tmux ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

interface HookEvent {
  hook_event_name: string;
  session_id: string;
  transcript_path: string;
  cwd: string;
  prompt_id?: string;
  prompt?: string;
  source?: string;
  model?: string;
  reason?: string;
  last_assistant_message?: string;
  tool_name?: string;
  tool_input?: { command?: string; description?: string };
  tool_use_id?: string;
  tool_response?: { stdout?: string };
  duration_ms?: number;
  background_tasks?: unknown[];
  stop_hook_active?: boolean;
  permission_mode?: string;
}

function events(): HookEvent[] {
  if (!existsSync(hookLog)) return [];
  return readFileSync(hookLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as HookEvent);
}

function find(pred: (e: HookEvent) => boolean): HookEvent | undefined {
  return events().find(pred);
}

async function startFake(name: string, args: string[], extraEnv: Record<string, string> = {}): Promise<void> {
  const e = Object.entries(extraEnv).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  await tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", cwd, ...e, "--", FAKE, ...args]);
}

const capture = (name: string) => tmux(["capture-pane", "-p", "-t", `=${name}:`]);

async function paste(name: string, text: string): Promise<void> {
  const buf = `cs-${randomBytes(4).toString("hex")}`;
  await tmux(["load-buffer", "-b", buf, "-"], text);
  await tmux(["paste-buffer", "-p", "-d", "-b", buf, "-t", `=${name}:`]);
}

/** The input box ("❯" + a no-break space) shows the start of what was pasted. */
async function inInputBox(name: string, text: string): Promise<void> {
  const head = text.split("\n")[0]!.slice(0, 30);
  await waitFor(`paste in the input box of ${name}`, async () => (await capture(name)).includes(`❯\u00a0${head}`));
}

async function sendPrompt(name: string, text: string): Promise<void> {
  await paste(name, text);
  await inInputBox(name, text);
  await tmux(["send-keys", "-t", `=${name}:`, "Enter"]);
}

function transcriptLines(id: string): Array<Record<string, unknown>> {
  const p = join(projectDir, `${id}.jsonl`);
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const hook = [{ matcher: "*", hooks: [{ type: "command", command: `cat >> '${hookLog}'` }] }];
  const names = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "StopFailure",
    "SessionEnd",
  ];
  writeFileSync(settingsPath, JSON.stringify({ hooks: Object.fromEntries(names.map((n) => [n, hook])) }));
  // a keeper session so the private server survives while the sessions under test come and go
  await tmux(["new-session", "-d", "-s", "keep", "--", "sleep", "600"]);
});

afterAll(async () => {
  await run("tmux", ["-L", SOCKET, "-f", "/dev/null", "kill-server"]).catch(() => undefined);
  rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("fake claude: command line", () => {
  it("answers --version and refuses bad invocations like the real CLI", async () => {
    const v = await run(FAKE, ["--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout).toBe("2.1.330 (Claude Code)\n");

    const bad = await run(FAKE, ["--session-id", "not-a-uuid"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Invalid session ID. Must be a valid UUID.");

    const missing = randomUUID();
    const nf = await run(FAKE, ["--resume", missing]);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toContain(`No conversation found with session ID: ${missing}`);

    const nested = await run(FAKE, [], { env: { ...baseEnv, CLAUDECODE: "1" } });
    expect(nested.code).toBe(1);
    expect(nested.stderr).toContain("cannot be launched inside another Claude Code session");
  });
});

describe("fake claude in tmux", () => {
  const idA = randomUUID();

  it("starts, fires SessionStart and draws the idle prompt", async () => {
    const t0 = performance.now();
    await startFake("a", ["--session-id", idA, "--settings", settingsPath], { FAKE_CLAUDE_ENTER_GUARD_MS: "600" });
    const start = await waitFor("SessionStart", () => find((e) => e.hook_event_name === "SessionStart" && e.session_id === idA));
    const elapsed = performance.now() - t0;
    console.log(`fake claude: tmux new-session to SessionStart hook in ${elapsed.toFixed(0)} ms`);
    expect(start.source).toBe("startup");
    expect(start.model).toBe("claude-opus-4-8[1m]");
    expect(start.cwd).toBe(cwd);
    expect(start.transcript_path).toBe(join(projectDir, `${idA}.jsonl`));
    const screen = await capture("a");
    expect(screen).toContain("Claude Code v2.1.330");
    expect(screen).toContain("? for shortcuts");
    expect(screen).toMatch(/^❯/m);
  });

  it("takes a bracketed paste plus a separate Enter as one prompt", async () => {
    const text = `first line with "double" and 'single' quotes\nsecond line with $(x) and \`y\` and $HOME\nthird`;
    await paste("a", text);
    // The paste alone submits nothing: it stays in the input box.
    await inInputBox("a", text);
    expect(find((e) => e.hook_event_name === "UserPromptSubmit" && e.session_id === idA)).toBeUndefined();
    expect(await capture("a")).toContain("second line with $(x)");
    await tmux(["send-keys", "-t", "=a:", "Enter"]);

    const ups = await waitFor("UserPromptSubmit", () =>
      find((e) => e.hook_event_name === "UserPromptSubmit" && e.session_id === idA),
    );
    expect(ups.prompt).toBe(text);
    expect(ups.permission_mode).toBe("default");
    const stop = await waitFor("Stop", () => find((e) => e.hook_event_name === "Stop" && e.prompt_id === ups.prompt_id));
    expect(stop.last_assistant_message).toBe(`FAKE REPLY: ${text}`);
    expect(stop.stop_hook_active).toBe(false);
    expect(stop.background_tasks).toEqual([]);

    const lines = await waitFor("assistant transcript line", () => {
      const l = transcriptLines(idA);
      return l.some((x) => x.type === "assistant") ? l : undefined;
    });
    const user = lines.find((x) => x.type === "user");
    const assistant = lines.find((x) => x.type === "assistant");
    expect(user?.message).toEqual({ role: "user", content: text });
    expect(user?.sessionId).toBe(idA);
    expect(user?.promptId).toBe(ups.prompt_id);
    expect(assistant?.parentUuid).toBe(user?.uuid);
    const msg = assistant?.message as { role: string; content: Array<{ type: string; text: string }> };
    expect(msg.role).toBe("assistant");
    expect(msg.content[0]?.text).toBe(`FAKE REPLY: ${text}`);
    await waitFor("reply on screen", async () => (await capture("a")).includes("✻ Worked for"));
  });

  it("asks permission for FAKE_BASH, ignores keys during the guard, runs the command on 1", async () => {
    const target = join(cwd, "bash-ran.txt");
    const command = `touch ${target}`;
    await sendPrompt("a", `FAKE_BASH:${command}`);
    const pre = await waitFor("PreToolUse", () => find((e) => e.hook_event_name === "PreToolUse" && e.session_id === idA));
    expect(pre.tool_name).toBe("Bash");
    expect(pre.tool_input).toEqual({ command, description: "fake command" });
    const perm = await waitFor("PermissionRequest", () =>
      find((e) => e.hook_event_name === "PermissionRequest" && e.prompt_id === pre.prompt_id),
    );
    expect(perm.tool_input?.command).toBe(command);
    const screen = await capture("a");
    expect(screen).toContain("Do you want to proceed?");
    expect(screen).toContain("❯ 1. Yes");
    expect(screen).toContain("3. No");
    expect(screen).toContain(command);

    await tmux(["send-keys", "-t", "=a:", "1"]); // inside the 200 ms guard: ignored
    // Time passing is the point here: the key must stay ignored, and the next one come after the guard.
    await sleep(150);
    expect(existsSync(target)).toBe(false);
    await sleep(600);
    await tmux(["send-keys", "-t", "=a:", "1"]);
    const post = await waitFor("PostToolUse", () =>
      find((e) => e.hook_event_name === "PostToolUse" && e.prompt_id === pre.prompt_id),
    );
    expect(post.tool_use_id).toBe(pre.tool_use_id);
    expect(typeof post.duration_ms).toBe("number");
    expect(existsSync(target)).toBe(true);
    const stop = await waitFor("Stop", () => find((e) => e.hook_event_name === "Stop" && e.prompt_id === pre.prompt_id));
    expect(stop.last_assistant_message).toBe(`FAKE: ran ${command}`);
    const order = events()
      .filter((e) => e.prompt_id === pre.prompt_id)
      .map((e) => e.hook_event_name);
    expect(order).toEqual(["UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]);
  });

  it("Esc during a slow turn interrupts it without a Stop hook", async () => {
    await sendPrompt("a", "FAKE_SLOW:5000 take your time");
    const ups = await waitFor("UserPromptSubmit", () =>
      find((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === "FAKE_SLOW:5000 take your time"),
    );
    await waitFor("busy screen", async () => (await capture("a")).includes("esc to interrupt"));
    await tmux(["send-keys", "-t", "=a:", "Escape"]);
    await waitFor("Interrupted on screen", async () => /Interrupted · What should Claude do instead\?/.test(await capture("a")));
    expect(await capture("a")).toContain("? for shortcuts");

    await sendPrompt("a", "after the interrupt");
    const next = await waitFor("UserPromptSubmit", () =>
      find((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === "after the interrupt"),
    );
    await waitFor("Stop", () => find((e) => e.hook_event_name === "Stop" && e.prompt_id === next.prompt_id));
    // Hooks run one at a time in order: a Stop of the interrupted turn would be in the log before the next one's.
    expect(find((e) => e.hook_event_name === "Stop" && e.prompt_id === ups.prompt_id)).toBeUndefined();
  });

  it("kill-session gives SessionEnd with reason other", async () => {
    await tmux(["kill-session", "-t", "=a"]);
    const end = await waitFor("SessionEnd", () => find((e) => e.hook_event_name === "SessionEnd" && e.session_id === idA));
    expect(end.reason).toBe("other");
  });

  it("--resume keeps the session id and appends to the same transcript", async () => {
    const before = transcriptLines(idA).length;
    const startsBefore = events().filter((e) => e.hook_event_name === "SessionStart").length;
    await startFake("b", ["--resume", idA, "--settings", settingsPath]);
    const start = await waitFor("SessionStart (resume)", () => {
      const s = events().filter((e) => e.hook_event_name === "SessionStart");
      return s.length > startsBefore ? s[s.length - 1] : undefined;
    });
    expect(start.session_id).toBe(idA);
    expect(start.source).toBe("resume");
    expect(await capture("b")).toContain("FAKE REPLY: after the interrupt"); // history redrawn
    await sendPrompt("b", "resumed prompt");
    const ups = await waitFor("UserPromptSubmit", () =>
      find((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === "resumed prompt"),
    );
    expect(ups.session_id).toBe(idA);
    await waitFor("Stop", () => find((e) => e.hook_event_name === "Stop" && e.prompt_id === ups.prompt_id));
    await waitFor("transcript grew", () => transcriptLines(idA).length >= before + 2);
    await tmux(["kill-session", "-t", "=b"]);
    await waitFor(
      "SessionEnd",
      () => events().filter((e) => e.hook_event_name === "SessionEnd" && e.session_id === idA).length === 2,
    );
  });

  it("--resume --fork-session: SessionStart reports the old id, the new id starts with the first prompt", async () => {
    const idC = randomUUID();
    const before = transcriptLines(idA).length;
    await startFake("c", ["--resume", idA, "--fork-session", "--session-id", idC, "--settings", settingsPath]);
    await waitFor(
      "SessionStart",
      () =>
        events().filter((e) => e.hook_event_name === "SessionStart" && e.session_id === idA && e.source === "resume").length ===
        2,
    );
    await sendPrompt("c", "forked prompt");
    const ups = await waitFor("UserPromptSubmit", () =>
      find((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === "forked prompt"),
    );
    expect(ups.session_id).toBe(idC);
    await waitFor("Stop", () => find((e) => e.hook_event_name === "Stop" && e.prompt_id === ups.prompt_id));
    const forked = await waitFor("fork transcript", () => {
      const l = transcriptLines(idC);
      return l.length >= before + 2 ? l : undefined;
    });
    expect(forked.every((l) => l.sessionId === idC)).toBe(true);
    expect(transcriptLines(idA).length).toBe(before);
    await tmux(["kill-session", "-t", "=c"]);
  });
});

describe("fake claude key parser: input split between reads", () => {
  it("two bracketed pastes sent back to back arrive whole wherever a read splits them; a lone ESC is Escape only at the end", async () => {
    const { KeyParser } = (await import(new URL("../fixtures/fake-claude/term.mjs", import.meta.url).href)) as {
      KeyParser: new () => {
        feed(s: string): Array<{ type: string; text?: string }>;
        flush(): Array<{ type: string }>;
        pendingEscape: boolean;
      };
    };
    const input = "\x1b[200~ab\x1b[201~\x1b[200~cd\x1b[201~";
    for (let cut = 1; cut < input.length; cut++) {
      const p = new KeyParser();
      const events = [...p.feed(input.slice(0, cut)), ...p.feed(input.slice(cut)), ...p.flush()];
      expect(events, `cut at ${cut}`).toEqual([
        { type: "paste", text: "ab" },
        { type: "paste", text: "cd" },
      ]);
    }
    const p = new KeyParser();
    expect(p.feed("\x1b")).toEqual([]);
    expect(p.pendingEscape).toBe(true);
    expect(p.flush()).toEqual([{ type: "escape" }]);
  });
});

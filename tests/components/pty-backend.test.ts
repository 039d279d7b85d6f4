/**
 * The pty backend with real processes: the fake `claude` (tests/fixtures/bin/claude) in a real
 * pseudo-terminal, its hooks running the real hook script into a temp events log. Temp HOME and
 * dirs only; argv arrays only.
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TerminalPlan } from "../../src/runners/host.js";
import { PtyHost } from "../../src/runners/terminal/pty/pty.js";
import { hooksSettings } from "../../src/claude/hooks.js";
import { installScripts } from "../../src/app.js";
import { FAKE_CLAUDE, until } from "../helpers/harness.js";

/** The input box (the fake draws "❯" + a no-break space) shows the start of what was pasted: Enter may follow. */
const inInputBox = async (b: { screen(id: string): Promise<string> }, id: string, text: string) =>
  until(async () => (await b.screen(id)).includes(`❯\u00a0${text.split("\n")[0]!.slice(0, 30)}`), 15_000, 20);

interface Ev {
  hook_event_name: string;
  [k: string]: unknown;
}

let root: string;
let home: string;
let hookScript: string;
let backend: PtyHost;
let seq = 0;

function events(path: string): Ev[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Ev);
}

function named(path: string, name: string): Ev[] {
  return events(path).filter((e) => e.hook_event_name === name);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Dead, or a zombie its new parent has not reaped yet (an orphan's reaping is up to init). */
function gone(pid: number): boolean {
  if (!alive(pid)) return true;
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** A session's own directory, settings file and spec for the fake claude. */
function fakeClaudeSpec(extraEnv: Record<string, string> = {}, extraArgs: string[] = []): TerminalPlan {
  const id = `t${++seq}${randomBytes(3).toString("hex")}`;
  const dir = join(root, "sessions", id);
  const cwd = join(root, "work", id);
  mkdirSync(dir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const eventsPath = join(dir, "events.jsonl");
  const settingsPath = join(dir, "settings.json");
  writeFileSync(eventsPath, "");
  writeFileSync(settingsPath, JSON.stringify(hooksSettings(eventsPath)));
  return {
    id,
    dir,
    argv: [FAKE_CLAUDE, "--session-id", randomUUID(), "--settings", settingsPath, ...extraArgs],
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", ...extraEnv },
    cols: 120,
    rows: 40,
    rawLogPath: join(dir, "output.log"),
    eventsPath,
  };
}

async function startReady(spec: TerminalPlan): Promise<number> {
  const { pid } = await backend.spawn(spec);
  await until(() => named(spec.eventsPath, "SessionStart").length > 0, 20_000);
  await until(async () => (await backend.screen(spec.id)).includes("❯"), 10_000);
  return pid;
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "cs-pty-")));
  home = join(root, "home");
  mkdirSync(home, { recursive: true });
  hookScript = (await installScripts(join(root, "state"))).hook;
  backend = new PtyHost({ hookScript });
});

afterAll(async () => {
  await backend?.close();
  if (root) rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("PtyHost with the fake claude", () => {
  let spec: ReturnType<typeof fakeClaudeSpec>;
  let pid: number;
  beforeAll(() => {
    spec = fakeClaudeSpec();
  });

  it("starts: SessionStart arrives and the screen shows the prompt", async () => {
    pid = await startReady(spec);
    expect(pid).toBeGreaterThan(0);
    const l = (await backend.list()).get(spec.id);
    expect(l).toEqual({ exists: true, alive: true, pid });
    const screen = await backend.screen(spec.id);
    expect(screen.split("\n")).toHaveLength(41); // 40 rows and a final newline, like capture-pane -p
    expect(screen).toMatch(/^❯\s*$/m); // the empty input line ("❯" and a no-break space)
    expect(screen).not.toMatch(/[ \t]\n/); // lines are right-trimmed
  });

  it("paste + Enter submits the exact multi-line prompt; Stop follows; the raw log grows", async () => {
    const before = statSync(spec.rawLogPath).size;
    const text = "first line\nsecond line, ünïcødé ✓\n  third line indented";
    await backend.paste(spec.id, text);
    await inInputBox(backend, spec.id, text);
    // Counts are taken relative to this attempt's start, so that a retry of this test (or of the next) still checks its own turn.
    const [submits, stops] = [named(spec.eventsPath, "UserPromptSubmit").length, named(spec.eventsPath, "Stop").length];
    await backend.keys(spec.id, ["Enter"]);
    const submit = await until(() => named(spec.eventsPath, "UserPromptSubmit")[submits], 10_000);
    expect(submit.prompt).toBe(text);
    await until(() => named(spec.eventsPath, "Stop").length === stops + 1, 10_000);
    await until(async () => (await backend.screen(spec.id)).includes("FAKE REPLY: first line"), 15_000);
    await until(() => statSync(spec.rawLogPath).size > before, 15_000);
    expect(readFileSync(spec.rawLogPath, "utf8")).toContain("FAKE REPLY: first line");
  });

  it("Escape during a slow turn shows Interrupted and fires no Stop", async () => {
    await backend.paste(spec.id, "take your time FAKE_SLOW:20000");
    await inInputBox(backend, spec.id, "take your time FAKE_SLOW:20000");
    const [submits, stops] = [named(spec.eventsPath, "UserPromptSubmit").length, named(spec.eventsPath, "Stop").length];
    const interrupted = async () => (await backend.screen(spec.id, { above: 1000 })).split("Interrupted").length - 1;
    const shown = await interrupted();
    await backend.keys(spec.id, ["Enter"]);
    await until(() => named(spec.eventsPath, "UserPromptSubmit").length === submits + 1, 10_000);
    await until(async () => (await backend.screen(spec.id)).includes("esc to interrupt"), 15_000);
    await backend.keys(spec.id, ["Escape"]);
    await until(async () => (await interrupted()) === shown + 1, 15_000);
    // Hooks run one at a time in order: once the next prompt's turn has ended, a Stop of the interrupted one would be in.
    await backend.paste(spec.id, "after the interrupt");
    await inInputBox(backend, spec.id, "after the interrupt");
    await backend.keys(spec.id, ["Enter"]);
    await until(() => named(spec.eventsPath, "Stop").length === stops + 1, 10_000);
    expect(named(spec.eventsPath, "Stop").map((e) => e.last_assistant_message)[stops]).toBe("FAKE REPLY: after the interrupt");
  });

  it("kill ends it gracefully: SessionEnd and cs:exit in the events log, pid gone, screen still readable", async () => {
    const res = await backend.kill(spec.id, { graceMs: 5000 });
    expect(res).toEqual({ exitCode: 143, forced: false });
    expect(alive(pid)).toBe(false);
    expect(named(spec.eventsPath, "SessionEnd")).toHaveLength(1);
    expect(named(spec.eventsPath, "cs:exit")).toEqual([{ hook_event_name: "cs:exit", exit_code: 143 }]);
    expect((await backend.list()).get(spec.id)).toEqual({ exists: true, alive: false, pid, exitCode: 143 });
    expect(await backend.screen(spec.id)).toContain("Interrupted");
    await expect(backend.paste(spec.id, "x")).rejects.toMatchObject({ code: "SESSION_DEAD" });
    await backend.remove(spec.id);
    expect((await backend.list()).has(spec.id)).toBe(false);
    await expect(backend.screen(spec.id)).rejects.toMatchObject({ code: "SESSION_DEAD" });
  });
});

describe("PtyHost environment and processes", () => {
  it("hands the environment over without argv: the secret reaches claude, never ps", async () => {
    const secret = `s3cret-${randomBytes(12).toString("hex")}`;
    const report = join(root, "env-report.jsonl");
    const spec = fakeClaudeSpec({ CS_TEST_SECRET: secret, FAKE_CLAUDE_REPORT: report });
    await startReady(spec);
    const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
    expect(ps).toContain(spec.argv[2]!); // the session's own argv is visible: we looked at the right list
    expect(ps).not.toContain(secret);
    await backend.paste(spec.id, "FAKE_ENV:CS_TEST_SECRET");
    await inInputBox(backend, spec.id, "FAKE_ENV:CS_TEST_SECRET");
    await backend.keys(spec.id, ["Enter"]);
    await until(() => existsSync(report) && readFileSync(report, "utf8").includes(secret), 10_000);
    const env = JSON.parse(readFileSync(report, "utf8").trim()) as { value: string };
    expect(env.value).toBe(secret);
    await backend.remove(spec.id);
  });

  it("sets TERM when the environment has none, keeps a given one", async () => {
    const probe = (env: Record<string, string>) => {
      const s = fakeClaudeSpec();
      return { ...s, argv: ["/bin/sh", "-c", 'printf "term=%s\\n" "$TERM"'], env: { PATH: process.env.PATH ?? "", ...env } };
    };
    const a = probe({});
    const b = probe({ TERM: "screen" });
    await backend.spawn(a);
    await backend.spawn(b);
    await until(
      async () => (await backend.list()).get(a.id)?.alive === false && (await backend.list()).get(b.id)?.alive === false,
      5000,
    );
    expect(await backend.screen(a.id)).toContain("term=xterm-256color");
    expect(await backend.screen(b.id)).toContain("term=screen");
    await backend.remove(a.id);
    await backend.remove(b.id);
  });

  it("a program that has not enabled bracketed paste gets the raw text", async () => {
    const s = { ...fakeClaudeSpec(), argv: ["/bin/cat"] };
    await backend.spawn(s);
    await backend.paste(s.id, "plain words");
    await backend.keys(s.id, ["Enter"]);
    // The tty echoes the line and cat prints it again; a bracketed paste would show its ^[[200~ markers.
    await until(async () => ((await backend.screen(s.id)).match(/^plain words$/gm) ?? []).length === 2, 5000);
    expect(await backend.screen(s.id)).not.toContain("200~");
    await backend.keys(s.id, ["C-c"]);
    await until(async () => (await backend.list()).get(s.id)?.alive === false, 5000);
    expect((await backend.list()).get(s.id)?.exitCode).toBe(130); // SIGINT: 128 + 2
    await backend.remove(s.id);
  });

  it("a process that ignores SIGTERM is killed after the grace time, group and all", async () => {
    const s = { ...fakeClaudeSpec(), argv: ["/bin/sh", "-c", "trap '' TERM; sleep 60 & echo child=$!; wait"] };
    const { pid } = await backend.spawn(s);
    const child = Number((await until(async () => /child=(\d+)/.exec(await backend.screen(s.id)) ?? undefined, 5000))[1]);
    expect(alive(child)).toBe(true);
    const t0 = Date.now();
    const res = await backend.kill(s.id, { graceMs: 300 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(res).toEqual({ exitCode: 137, forced: true });
    expect(alive(pid)).toBe(false);
    await until(() => gone(child), 2000);
    expect(named(s.eventsPath, "cs:exit")).toEqual([{ hook_event_name: "cs:exit", exit_code: 137 }]);
    await backend.remove(s.id);
  });

  it("a process that exits by itself is recorded with its exit code", async () => {
    const s = fakeClaudeSpec();
    await startReady(s);
    await backend.paste(s.id, "FAKE_CRASH please");
    await inInputBox(backend, s.id, "FAKE_CRASH please");
    await backend.keys(s.id, ["Enter"]);
    await until(() => named(s.eventsPath, "cs:exit").length === 1, 10_000);
    expect(named(s.eventsPath, "cs:exit")[0]).toEqual({ hook_event_name: "cs:exit", exit_code: 3 });
    expect((await backend.list()).get(s.id)).toMatchObject({ exists: true, alive: false, exitCode: 3 });
    expect(await backend.kill(s.id, { graceMs: 1000 })).toEqual({ exitCode: 3, forced: false });
    await backend.remove(s.id);
  });

  it.runIf(process.platform === "linux")("a session's process holds no other session's pty master", async () => {
    const a = { ...fakeClaudeSpec(), argv: ["/bin/sleep", "30"] };
    const b = { ...fakeClaudeSpec(), argv: ["/bin/sleep", "30"] };
    await backend.spawn(a);
    const { pid } = await backend.spawn(b);
    // The prelude closes what it inherited, then execs the program under the same pid.
    await until(() => readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("/bin/sleep\0"), 5000);
    const fds = readdirSync(`/proc/${pid}/fd`).map((f) => readlinkSync(`/proc/${pid}/fd/${f}`));
    expect(fds.filter((f) => f.includes("ptmx"))).toEqual([]);
    expect(fds.length).toBe(3);
    await backend.remove(a.id);
    await backend.remove(b.id);
  });

  it("close() ends every live session and records their exits", async () => {
    const own = new PtyHost({ hookScript });
    const specs = [fakeClaudeSpec(), fakeClaudeSpec()];
    const pids: number[] = [];
    for (const s of specs) {
      pids.push((await own.spawn(s)).pid);
      await until(() => named(s.eventsPath, "SessionStart").length > 0, 20_000);
    }
    await own.close();
    for (const [i, s] of specs.entries()) {
      expect(alive(pids[i]!)).toBe(false);
      expect(named(s.eventsPath, "SessionEnd")).toHaveLength(1);
      expect(named(s.eventsPath, "cs:exit")).toEqual([{ hook_event_name: "cs:exit", exit_code: 143 }]);
    }
    expect((await own.list()).size).toBe(0);
    await expect(own.spawn(fakeClaudeSpec())).rejects.toMatchObject({ code: "PROCESS_ERROR" });
  });
});

/**
 * The tmux backend against a recording command runner: the exact argv it gives tmux, and the proof that no
 * caller's string (cwd, argv, environment, prompt text) is ever among them — they travel in the hand-off file
 * and on stdin. No tmux runs here.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installScripts } from "../../src/app.js";
import { TmuxHost } from "../../src/runners/terminal/tmux/tmux.js";
import type { RunOptions, RunResult } from "../../src/util/proc/exec.js";

interface Call {
  file: string;
  args: string[];
  input?: string;
  handoff?: string;
}

let root: string;
let calls: Call[];
let backend: TmuxHost;
let scripts: { hook: string; launch: string };

/** Answers like tmux would, and plays the launcher: reads and deletes the hand-off file. */
async function runner(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const call: Call = { file, args: [...args], ...(opts.input !== undefined ? { input: String(opts.input) } : {}) };
  calls.push(call);
  let stdout = "";
  if (args.includes("new-session")) {
    const handoff = args[args.indexOf("--") + 2]!;
    call.handoff = readFileSync(handoff, "latin1");
    rmSync(handoff);
    stdout = "%7 999999999\n"; // a pid that is not running
  }
  return { code: 0, signal: null, stdout, stderr: "" };
}

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "cs-tmuxargv-"));
  scripts = await installScripts(join(root, "state"));
  calls = [];
  backend = new TmuxHost({ socketName: "cs-test-sock", hookScript: scripts.hook, launchScript: scripts.launch, runner });
});
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

describe("tmux argv", () => {
  it("spawn: one new-session chain of server-made strings; cwd, argv and env only in the hand-off file", async () => {
    const dir = join(root, "state", "abc");
    mkdirSync(dir);
    const hostileCwd = "/w/x#(touch pwned);";
    const spawned = await backend.spawn({
      id: "abc",
      dir,
      argv: ["/bin/claude", "--model=a;", "-p", "#{pane_id}"],
      cwd: hostileCwd,
      env: { TERM: "xterm", SECRET: "s3cr3t $(x)" },
      cols: 120,
      rows: 40,
      rawLogPath: join(dir, "output.log"),
      eventsPath: join(dir, "events.jsonl"),
      generation: 3,
    });
    expect(spawned).toEqual({ pid: 999999999, ref: { pane: "%7", target: "cs-abc", socket: "cs-test-sock" } });
    expect(calls).toHaveLength(1);
    const c = calls[0]!;
    const handoff = c.args[c.args.indexOf("--") + 2]!;
    expect(handoff).toMatch(new RegExp(`^${dir}/handoff\\.[0-9a-f-]{36}$`));
    expect(c.args).toEqual([
      "-L",
      "cs-test-sock",
      "new-session",
      "-d",
      "-s",
      "cs-abc",
      "-x",
      "120",
      "-y",
      "40",
      "-c",
      dir,
      "-P",
      "-F",
      "#{pane_id} #{pane_pid}",
      "--",
      scripts.launch,
      handoff,
      ";",
      "set-option",
      "-w",
      "-t",
      "=cs-abc:",
      "remain-on-exit",
      "on",
      ";",
      "set-hook",
      "-t",
      "=cs-abc:",
      "pane-died",
      `run-shell -b "'${scripts.hook}' '${dir}/events.jsonl' exit #{pane_dead_status} 3"`,
      ";",
      "pipe-pane",
      "-o",
      "-t",
      "=cs-abc:",
      `cat >> '${dir}/output.log'`,
    ]);
    // Nothing the caller gave is on tmux's command line.
    for (const s of [hostileCwd, "--model=a;", "#{pane_id}", "s3cr3t"])
      expect(
        c.args.some((a) => a.includes(s) && a !== "#{pane_id} #{pane_pid}"),
        s,
      ).toBe(false);
    // It is all in the hand-off file, exactly, TERM left to tmux; the file is gone.
    expect(c.handoff).toBe(
      `C:${hostileCwd}\0E:${dir}/events.jsonl\0G:3\0A:/bin/claude\0A:--model=a;\0A:-p\0A:#{pane_id}\0V:SECRET=s3cr3t $(x)\0`,
    );
    expect(existsSync(handoff)).toBe(false);
  });

  it("spawn: a tmux server that exits as new-session reaches it is started again; another failure is not retried", async () => {
    const dir = join(root, "state", "gone");
    mkdirSync(dir);
    const spec = {
      id: "gone",
      dir,
      argv: ["/bin/claude"],
      cwd: root,
      env: {},
      cols: 80,
      rows: 24,
      rawLogPath: join(dir, "output.log"),
      eventsPath: join(dir, "events.jsonl"),
    };
    // The first new-session meets a server that exits (its last session had just ended); the second starts one.
    let failures = 1;
    const flaky = async (file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> => {
      if (args.includes("new-session") && failures-- > 0) {
        calls.push({ file, args: [...args] });
        return { code: 1, signal: null, stdout: "", stderr: "server exited unexpectedly\n" };
      }
      return runner(file, args, opts);
    };
    const host = new TmuxHost({
      socketName: "cs-test-sock",
      hookScript: scripts.hook,
      launchScript: scripts.launch,
      runner: flaky,
    });
    expect(await host.spawn(spec)).toMatchObject({ pid: 999999999 });
    expect(calls.filter((c) => c.args.includes("new-session"))).toHaveLength(2);
    // Each try had its own hand-off file, and none is left behind.
    const [first, second] = calls.map((c) => c.args[c.args.indexOf("--") + 2]);
    expect(first).not.toBe(second);
    expect(readdirSync(dir).filter((f) => f.startsWith("handoff."))).toEqual([]);
    // Any other refusal is the caller's error at once.
    calls = [];
    const refused = async (file: string, args: readonly string[]): Promise<RunResult> => {
      calls.push({ file, args: [...args] });
      return { code: 1, signal: null, stdout: "", stderr: "duplicate session: cs-gone\n" };
    };
    const host2 = new TmuxHost({
      socketName: "cs-test-sock",
      hookScript: scripts.hook,
      launchScript: scripts.launch,
      runner: refused,
    });
    await expect(host2.spawn(spec)).rejects.toMatchObject({ code: "PROCESS_ERROR" });
    expect(calls).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.startsWith("handoff."))).toEqual([]);
  });

  it("paste goes through stdin into a named buffer; keys are named keys on an exact target", async () => {
    await backend.paste("abc", "text; #{pane_id} $(x)\nline");
    await backend.keys("abc", ["Enter", "C-c"]);
    await backend.screen("abc");
    expect(calls.map((c) => c.args)).toEqual([
      [
        "-L",
        "cs-test-sock",
        "load-buffer",
        "-b",
        `cs-abc-${process.pid}-1`,
        "-",
        ";",
        "paste-buffer",
        "-p",
        "-d",
        "-b",
        `cs-abc-${process.pid}-1`,
        "-t",
        "=cs-abc:",
      ],
      ["-L", "cs-test-sock", "send-keys", "-t", "=cs-abc:", "Enter", "C-c"],
      ["-L", "cs-test-sock", "capture-pane", "-p", "-t", "=cs-abc:"],
    ]);
    expect(calls[0]!.input).toBe("text; #{pane_id} $(x)\nline");
  });

  it("pasteEach: every piece its own bracketed paste, all in one tmux call through stdin", async () => {
    await backend.pasteEach("abc", ["one; #{x}\nline", "two\u001b[201~ still text", "three"]);
    expect(calls.map((c) => c.args)).toEqual([
      [
        "-L",
        "cs-test-sock",
        "load-buffer",
        "-b",
        `cs-abc-${process.pid}-1`,
        "-",
        ";",
        "paste-buffer",
        "-p",
        "-d",
        "-b",
        `cs-abc-${process.pid}-1`,
        "-t",
        "=cs-abc:",
      ],
    ]);
    // paste-buffer -p brackets the whole buffer; the ends and starts between the pieces make each its own paste. A
    // marker inside a piece would end its paste early: dropped.
    expect(calls[0]!.input).toBe("one; #{x}\nline\u001b[201~\u001b[200~two still text\u001b[201~\u001b[200~three");
  });

  it("attach and liveness use exact targets", async () => {
    expect(backend.attachArgv("abc")).toEqual(["tmux", "-L", "cs-test-sock", "attach-session", "-t", "=cs-abc"]);
    expect(backend.attachCommand("abc")).toBe("tmux -L 'cs-test-sock' attach -t =cs-abc");
    await backend.remove("abc");
    expect(calls.at(-1)!.args).toEqual(["-L", "cs-test-sock", "kill-session", "-t", "=cs-abc"]);
  });
});

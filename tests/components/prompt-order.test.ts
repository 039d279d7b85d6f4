/**
 * Issue 38: UserPromptSubmit's hook runs in the background (claude/hooks.ts). The commands run as Claude runs
 * them (sh -c, the payload on stdin): a turn's event waits for its prompt's line, a turn without one waits once, a
 * payload whose prompt id is not to be trusted waits for nothing, and every line is whole.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { orderedHookCommand, promptHookCommand, promptMarkPath } from "../../src/claude/hooks.js";
import { toolPaths } from "../../src/util/proc/tools.js";

const root = mkdtempSync(join(tmpdir(), "cs-prompt-order-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function runHook(command: string, payload: string): Promise<{ code: number | null; out: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const c = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    c.stdout.on("data", (b) => (out += b));
    c.stderr.on("data", (b) => (out += b));
    c.on("close", (code) => resolve({ code, out, ms: Date.now() - t0 }));
    c.stdin.end(payload);
  });
}

const base = { session_id: "0b7c", transcript_path: "/h/.claude/projects/x/0b7c.jsonl", cwd: "/w" };
const ups = (id: string, prompt: string) =>
  JSON.stringify({ ...base, prompt_id: id, permission_mode: "default", hook_event_name: "UserPromptSubmit", prompt });
const stop = (id: string, text: string) =>
  JSON.stringify({ ...base, prompt_id: id, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: text });

function logOf(events: string): Array<Record<string, unknown>> {
  return readFileSync(events, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("UserPromptSubmit in the background, the log in order", () => {
  const t = toolPaths();

  it("a turn's Stop that comes before its prompt's line waits for it, and lands after it", async () => {
    const events = join(root, "late.jsonl");
    writeFileSync(events, "");
    const reply = "r".repeat(40_000);
    const stopped = runHook(orderedHookCommand(events, t), stop("p-1", reply));
    await new Promise((r) => setTimeout(r, 120)); // the background hook is late
    const prompt = await runHook(promptHookCommand(events, t), ups("p-1", 'hello "prompt_id":"not-this-one"'));
    const s = await stopped;
    expect([prompt.code, prompt.out, s.code, s.out]).toEqual([0, "", 0, ""]);
    expect(s.ms).toBeGreaterThanOrEqual(100);
    expect(logOf(events).map((x) => [x.hook_event_name, x.prompt_id])).toEqual([
      ["UserPromptSubmit", "p-1"],
      ["Stop", "p-1"],
    ]);
    expect(logOf(events)[1]!.last_assistant_message).toBe(reply);
    expect(readFileSync(promptMarkPath(events), "utf8")).toBe("p-1");
    // Once the prompt's line is in, its other events go at once.
    const again = await runHook(orderedHookCommand(events, t), stop("p-1", "again"));
    expect(again.ms).toBeLessThan(100);
  });

  it("a turn with no UserPromptSubmit (a prompt the CLI queued) waits once, then its events go at once", async () => {
    const events = join(root, "none.jsonl");
    writeFileSync(events, "");
    const first = await runHook(orderedHookCommand(events, t), stop("q-2", "a"));
    expect(first.code).toBe(0);
    expect(first.ms).toBeGreaterThanOrEqual(250); // PROMPT_WAIT_TRIES naps
    expect(first.ms).toBeLessThan(3000);
    const second = await runHook(orderedHookCommand(events, t), stop("q-2", "b"));
    expect(second.ms).toBeLessThan(100);
    expect(logOf(events).map((x) => x.last_assistant_message)).toEqual(["a", "b"]);
  });

  it("waits for nothing when the prompt id cannot be trusted: a tool's input or a prompt before it, odd characters", async () => {
    const events = join(root, "hostile.jsonl");
    writeFileSync(events, "");
    const payloads = [
      // No prompt id of its own: one inside the tool's input must not be taken for it.
      JSON.stringify({ ...base, hook_event_name: "PreToolUse", tool_input: { prompt_id: "evil" }, tool_name: "X" }),
      JSON.stringify({ ...base, hook_event_name: "Stop", last_assistant_message: 'say "prompt_id":"evil2"' }),
      JSON.stringify({ ...base, prompt_id: "a b$(touch pwned)", hook_event_name: "Stop" }),
    ];
    for (const p of payloads) {
      const r = await runHook(orderedHookCommand(events, t), p);
      expect(r.code).toBe(0);
      expect(r.ms).toBeLessThan(200);
    }
    expect(logOf(events)).toHaveLength(3);
    expect(readFileSync(promptMarkPath(events), { encoding: "utf8", flag: "a+" })).toBe("");
  });

  it("a pretty-printed payload is joined into one line, and nothing is printed (stdout is context for Claude)", async () => {
    const events = join(root, "pretty.jsonl");
    writeFileSync(events, "");
    const pretty = JSON.stringify({ ...base, hook_event_name: "UserPromptSubmit", prompt: "two\nlines" }, null, 2);
    for (const cmd of [promptHookCommand(events, t), orderedHookCommand(events, t)]) {
      const r = await runHook(cmd, pretty);
      expect([r.code, r.out]).toEqual([0, ""]);
    }
    expect(logOf(events).map((x) => x.prompt)).toEqual(["two\nlines", "two\nlines"]);
  });

  it("the prompt's hook outlives a hangup of its terminal (a CLI that died right after taking the prompt)", async () => {
    const events = join(root, "hup.jsonl");
    writeFileSync(events, "");
    const payload = ups("h-1", "still recorded");
    const c = spawn("/bin/sh", ["-c", promptHookCommand(events, t)], { stdio: ["pipe", "ignore", "ignore"], detached: true });
    const closed = new Promise((r) => c.on("close", r));
    c.stdin.write(payload.slice(0, 40));
    await new Promise((r) => setTimeout(r, 100));
    process.kill(-c.pid!, "SIGHUP"); // the terminal's whole process group, as a pty or tmux pane that closes
    await new Promise((r) => setTimeout(r, 50));
    c.stdin.end(payload.slice(40));
    await closed;
    expect(logOf(events).map((x) => x.prompt)).toEqual(["still recorded"]);
    expect(readFileSync(promptMarkPath(events), "utf8")).toBe("h-1");
  });

  it("many prompts and their turns' events at once: whole lines, each turn's events after its prompt", async () => {
    const events = join(root, "many.jsonl");
    writeFileSync(events, "");
    // One turn at a time, as the CLI runs them, each prompt's hook started late after its Stop.
    for (let i = 0; i < 8; i++) {
      const s = runHook(orderedHookCommand(events, t), stop(`m-${i}`, `${i}:` + "x".repeat(8000)));
      await new Promise((r) => setTimeout(r, 20));
      await runHook(promptHookCommand(events, t), ups(`m-${i}`, `prompt ${i}`));
      await s;
    }
    const log = logOf(events);
    expect(log.map((x) => `${String(x.hook_event_name)}:${String(x.prompt_id)}`)).toEqual(
      [...Array(8).keys()].flatMap((i) => [`UserPromptSubmit:m-${i}`, `Stop:m-${i}`]),
    );
  });
});

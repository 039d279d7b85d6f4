/**
 * The hook command runs inside Claude's loop: it must be cheap and must never tear or interleave
 * lines, even with many concurrent hooks and 64 KB payloads arriving in small pieces.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hookCommand } from "../../src/claude/hooks.js";
import { installScripts } from "../../src/app.js";

const root = mkdtempSync(join(tmpdir(), "cs-hook-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

/** Runs a hook command as Claude does (sh -c), its payload written in 4 KB pieces with pauses, like a slow producer. */
function runHook(command: string, payload: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const c = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    c.stdout.on("data", (b) => (out += b));
    c.on("close", (code) => resolve({ code, stdout: out }));
    let i = 0;
    const step = () => {
      if (i >= payload.length) return void c.stdin.end();
      c.stdin.write(payload.slice(i, i + 4096));
      i += 4096;
      setTimeout(step, 1);
    };
    step();
  });
}

describe("the hook command and hook.sh", () => {
  it.each([
    ["the settings' hook command", (events: string, _hook: string) => hookCommand(events)],
    ["hook.sh", (events: string, hook: string) => `'${hook}' '${events}'`],
  ])(
    "%s: 32 concurrent hooks with 64 KB pretty-printed payloads append 32 whole lines",
    async (_name, command) => {
      const { hook } = await installScripts(join(root, "state"));
      const events = join(root, `events-${_name.length}.jsonl`);
      writeFileSync(events, "");
      const payloads = Array.from({ length: 32 }, (_, i) =>
        JSON.stringify(
          { hook_event_name: "Stop", n: i, last_assistant_message: `${i}:` + "x".repeat(64 * 1024) + "\nline two" },
          null,
          2,
        ),
      );
      const res = await Promise.all(payloads.map((p) => runHook(command(events, hook), p)));
      for (const r of res) {
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(""); // a hook's stdout would become context for Claude
      }
      const lines = readFileSync(events, "utf8").split("\n").filter(Boolean); // blank lines separate records
      expect(lines).toHaveLength(32);
      const seen = lines.map((l) => JSON.parse(l) as { n: number; last_assistant_message: string });
      expect(seen.map((s) => s.n).sort((a, b) => a - b)).toEqual([...Array(32).keys()]);
      for (const s of seen) expect(s.last_assistant_message).toBe(`${s.n}:` + "x".repeat(64 * 1024) + "\nline two");
    },
    30_000,
  );

  it("records a process exit with its status, and a non-numeric status as null", async () => {
    const { hook } = await installScripts(join(root, "state2"));
    const events = join(root, "exit.jsonl");
    writeFileSync(events, "");
    await new Promise((r) => spawn(hook, [events, "exit", "7"]).on("close", r));
    await new Promise((r) => spawn(hook, [events, "exit", "$(id)"]).on("close", r));
    // Each record starts on a fresh line (a torn line left by a killed writer cannot swallow it).
    expect(readFileSync(events, "utf8")).toBe(
      '\n{"hook_event_name":"cs:exit","exit_code":7}\n\n{"hook_event_name":"cs:exit","exit_code":null}\n',
    );
  });
});

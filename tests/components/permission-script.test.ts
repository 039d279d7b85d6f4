/**
 * bin/permission.sh, the blocking PermissionRequest hook, run as Claude runs it (sh -c, the payload on stdin):
 * it appends the request with its key, prints exactly the server's decision (nothing else, ever), removes it,
 * and on time-out appends cs:permission_fallback and prints nothing.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installScripts } from "../../src/app.js";
import { permissionHookEntry } from "../../src/claude/hooks.js";
import { until } from "../helpers/wait.js";

const root = mkdtempSync(join(tmpdir(), "cs-perm-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

function runHook(
  command: string,
  payload: string,
  cwd: string,
): { done: Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> } {
  const t0 = Date.now();
  const c = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "pipe", "pipe"], cwd });
  let out = "";
  let err = "";
  c.stdout.on("data", (b) => (out += b));
  c.stderr.on("data", (b) => (err += b));
  c.stdin.end(payload);
  return {
    done: new Promise((resolve) => c.on("close", (code) => resolve({ code, stdout: out, stderr: err, ms: Date.now() - t0 }))),
  };
}

const lines = (f: string) =>
  readFileSync(f, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("permission.sh", () => {
  it("appends the request with its key, prints exactly the decision written for that key and removes it", async () => {
    const { permission } = await installScripts(join(root, "state"));
    const dir = join(root, "s1");
    const decisions = join(dir, "decisions");
    mkdirSync(decisions, { recursive: true });
    const events = join(dir, "events.jsonl");
    writeFileSync(events, "");
    // A hostile payload: shell syntax in strings never runs; pretty-printed, as some writers send it.
    const payload = JSON.stringify(
      {
        hook_event_name: "PermissionRequest",
        tool_name: "Bash",
        tool_input: { command: "echo $(touch pwned) `touch pwned2` '\"" },
      },
      null,
      2,
    );
    const { command } = permissionHookEntry(events, { script: permission, decisionsDir: decisions, timeoutMs: 10_000 });
    const run = runHook(command, payload, dir);
    const key = await until(() => lines(events)[0]?.cs_request as string | undefined);
    expect(key).toMatch(/^r[0-9]+x[0-9]+$/);
    expect(lines(events)[0]).toMatchObject({
      hook_event_name: "PermissionRequest",
      tool_input: { command: "echo $(touch pwned) `touch pwned2` '\"" },
    });
    const decision =
      JSON.stringify({
        hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "no" } },
      }) + "\n";
    writeFileSync(join(decisions, `${key}.json`), decision, { mode: 0o600 });
    const r = await run.done;
    expect(r).toMatchObject({ code: 0, stdout: decision, stderr: "" });
    expect(readdirSync(decisions)).toEqual([]);
    expect(existsSync(join(dir, "pwned")) || existsSync(join(dir, "pwned2"))).toBe(false);
    expect(lines(events)).toHaveLength(1);
  });

  it("on time-out: prints nothing, exits 0, and appends cs:permission_fallback with the request's key", async () => {
    const { permission } = await installScripts(join(root, "state2"));
    const dir = join(root, "s2");
    mkdirSync(dir, { recursive: true });
    const events = join(dir, "events.jsonl");
    writeFileSync(events, "");
    const { command, timeout } = permissionHookEntry(events, {
      script: permission,
      decisionsDir: join(dir, "decisions"),
      timeoutMs: 300,
    });
    expect(timeout).toBeGreaterThan(1);
    const r = await runHook(
      command,
      JSON.stringify({ hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: {} }),
      dir,
    ).done;
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const ev = lines(events);
    expect(ev.map((e) => e.hook_event_name)).toEqual(["PermissionRequest", "cs:permission_fallback"]);
    expect(ev[1]!.cs_request).toBe(ev[0]!.cs_request);
  });
});

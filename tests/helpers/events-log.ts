/** An events log as its writers and readers see it: the settings' hook command run on a payload, and the log read back. */
import { spawn } from "node:child_process";
import { hookCommand } from "../../src/claude/hooks.js";
import { EventTail } from "../../src/events/eventlog.js";
import type { LogEvent } from "../../src/events/reducer.js";

/** Runs the hook command Claude runs (sh → flock → paste) with `payload` on its stdin; resolves with its exit code. */
export function hookWrite(path: string, payload: string): Promise<number | null> {
  return new Promise((resolve) => {
    const c = spawn("/bin/sh", ["-c", hookCommand(path)], { stdio: ["pipe", "ignore", "ignore"] });
    c.on("close", resolve);
    c.stdin.end(payload);
  });
}

/** Every event in the log, read as a server reads it (EventTail), and what the reader reported. */
export async function readLog(path: string): Promise<{ events: LogEvent[]; problems: string[] }> {
  const events: LogEvent[] = [];
  const problems: string[] = [];
  const t = new EventTail(
    path,
    (evs) => events.push(...evs),
    (e) => void problems.push(String(e)),
  );
  await t.start();
  t.close();
  return { events, problems };
}

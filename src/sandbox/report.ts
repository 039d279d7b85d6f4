/**
 * The launcher's record of what its sandbox refused: one `cs:sandbox_violation` line per violation, appended to the
 * session's own events log through the hooks' locked path (flock, then paste), so the server folds it into the
 * session's count and the count survives server restarts. Lines go one at a time, in order; a failure to append is
 * dropped (the session goes on; the count is then a floor). Never a secret's value: names, hosts and the runtime's
 * refusal line only.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";

export interface ViolationLine {
  violation: "network" | "secret";
  message: string;
}

export function violationReporter(events: { path: string; flock: string; paste: string }): (v: ViolationLine) => Promise<void> {
  let chain = Promise.resolve();
  const one = (v: ViolationLine) =>
    new Promise<void>((done) => {
      let fd: number;
      try {
        fd = openSync(events.path, "a", 0o600);
      } catch {
        return done();
      }
      const line =
        JSON.stringify({
          hook_event_name: "cs:sandbox_violation",
          violation: v.violation,
          message: v.message.slice(0, 500),
          ts: new Date().toISOString(),
        }) + "\n";
      const p = spawn(events.flock, ["-w", "10", `${events.path}.lock`, events.paste, "-s", "-d", "\\0", "/dev/null", "-"], {
        stdio: ["pipe", fd, "ignore"],
      });
      const end = () => {
        try {
          closeSync(fd);
        } catch {
          // Closed already.
        }
        done();
      };
      p.on("error", end);
      p.on("close", end);
      p.stdin!.on("error", () => {});
      p.stdin!.end(line);
    });
  return (v) => (chain = chain.then(() => one(v)));
}

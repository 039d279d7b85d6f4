/**
 * The cross-process send lock (issue #16, fault 2): holders are real flock processes, so mutual
 * exclusion, release when the owning process is killed with -9, and timeouts are the kernel's.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireFileLock, LockTimeoutError, withFileLock } from "../../src/util/proc/flock.js";
import { ROOT } from "../helpers/harness.js";

const root = mkdtempSync(join(tmpdir(), "cs-flock-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

describe("cross-process file lock", () => {
  it("holders never overlap: 6 concurrent critical sections run one at a time", async () => {
    const lock = join(root, "a.lock");
    const log: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        withFileLock(lock, async () => {
          log.push(`in ${i}`);
          await new Promise((r) => setTimeout(r, 20)); // time inside the section, so an overlap would show
          log.push(`out ${i}`);
        }),
      ),
    );
    expect(log).toHaveLength(12);
    for (let k = 0; k < 12; k += 2) expect(log[k + 1]).toBe(log[k]!.replace("in", "out"));
  });

  it("a process killed with -9 while holding it releases it", async () => {
    const lock = join(root, "b.lock");
    const script = `import("${join(ROOT, "dist", "util", "proc", "flock.js")}").then(async (m) => { await m.acquireFileLock(${JSON.stringify(lock)}); process.stdout.write("held\\n"); setInterval(() => {}, 1000); });`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((r) => child.stdout!.on("data", (b: Buffer) => b.toString().includes("held") && r()));
    await expect(acquireFileLock(lock, { timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    child.kill("SIGKILL");
    const l = await acquireFileLock(lock, { timeoutMs: 5000 });
    await l.release();
  });
});

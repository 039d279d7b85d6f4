/**
 * The claim of one due time of one schedule: a file `<state>/schedules.claims/<sha256(name)>-<due ms>` put in place
 * with link(2), which fails when the name exists, so of two servers exactly one runs that time even if the
 * schedules file's lock were taken over mid-update (a stopped process judged stale). The tick's advance of `next_at`
 * under the lock is the first claim; this is the second. Claims older than a day are swept.
 */
import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, readdir, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

const KEEP_MS = 24 * 3_600_000;

export class RunClaims {
  private lastSweep = 0;

  constructor(
    private readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this process now holds (name, due); false when another did first. */
  async claim(name: string, due: number): Promise<boolean> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.sweepSoon();
    const path = join(this.dir, `${createHash("sha256").update(name).digest("hex").slice(0, 32)}-${due}`);
    const tmp = join(this.dir, `.claim.${process.pid}.${randomBytes(6).toString("hex")}`);
    await writeFile(tmp, JSON.stringify({ pid: process.pid, at: this.now() }), { mode: 0o600, flag: "wx" });
    try {
      await link(tmp, path);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    } finally {
      await unlink(tmp).catch(() => {});
    }
  }

  private sweepSoon(): void {
    if (this.now() - this.lastSweep < 3_600_000) return;
    this.lastSweep = this.now();
    void (async () => {
      for (const f of await readdir(this.dir).catch(() => [] as string[])) {
        const p = join(this.dir, f);
        const st = await stat(p).catch(() => undefined);
        if (st && this.now() - st.mtimeMs > KEEP_MS) await unlink(p).catch(() => {});
      }
    })();
  }
}

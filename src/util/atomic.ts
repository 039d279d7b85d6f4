/**
 * Replaces a file atomically and whole: a temp file beside it, every byte written (a short write, which a
 * full disk gives, is retried until it fails with ENOSPC), fsync, then rename over the target. A failure at
 * any step leaves the target as it was and removes the temp file. write-file-atomic 7 issues one write()
 * and does not look at how much of it was written: on a nearly full disk it renames a truncated file into
 * place (found by the ENOSPC fault scenario).
 */
import { renameSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { open, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Thrown when `stillMine` said no just before the rename: nothing was replaced. */
export class WriteAbandoned extends Error {}

/**
 * `stillMine` runs synchronously right before the rename, after all the slow work (writing, fsync): a
 * writer that may have lost its lock meanwhile (stopped, then taken over) checks here, with no await
 * between the check and the rename.
 */
export async function writeFileWhole(path: string, data: string | Uint8Array, mode = 0o600, stillMine?: () => boolean): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}`);
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
  let fh;
  try {
    fh = await open(tmp, "wx", mode);
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await fh.write(buf, off, buf.length - off, off);
      if (bytesWritten <= 0) throw Object.assign(new Error(`no progress writing ${tmp}`), { code: "EIO" });
      off += bytesWritten;
    }
    await fh.sync();
    await fh.close();
    fh = undefined;
    // The check and the rename in one synchronous step: an async rename goes through Node's thread pool, and a process
    // stopped (SIGSTOP) after the check but before that thread ran would still replace the file when it resumes.
    if (stillMine && !stillMine()) throw new WriteAbandoned(`not replacing ${path}: the lock is no longer ours`);
    renameSync(tmp, path);
  } catch (e) {
    await fh?.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  // Make the rename itself durable; not every file system lets a directory be opened for that.
  const dir = await open(dirname(path), "r").catch(() => undefined);
  await dir?.sync().catch(() => {});
  await dir?.close().catch(() => {});
}

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

/** The file a write put in place (the rename keeps the inode, size and mtime). */
export interface WrittenFile {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Thrown when `stillMine` said no just before the rename: nothing was replaced. */
export class WriteAbandoned extends Error {}

/**
 * `stillMine` runs synchronously right before the rename, after all the slow work (writing, fsync): a
 * writer that may have lost its lock meanwhile (stopped, then taken over) checks here, with no await
 * between the check and the rename. `tmpDir` (the lock's directory, on the same file system) holds the
 * temp file: when that directory is taken away before the rename, the rename finds nothing and nothing is
 * replaced (WriteAbandoned) — a fence for a process stopped between the check and the rename.
 */
export async function writeFileWhole(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
  stillMine?: () => boolean,
  tmpDir?: string,
): Promise<WrittenFile> {
  const tmp = join(tmpDir ?? dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}`);
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
  let fh;
  let written: WrittenFile | undefined;
  try {
    fh = await open(tmp, "wx", mode).catch((e: unknown) => {
      if (tmpDir && (e as NodeJS.ErrnoException).code === "ENOENT")
        throw new WriteAbandoned(`not writing ${path}: ${tmpDir} is gone (the lock was taken over)`);
      throw e;
    });
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await fh.write(buf, off, buf.length - off, off);
      if (bytesWritten <= 0) throw Object.assign(new Error(`no progress writing ${tmp}`), { code: "EIO" });
      off += bytesWritten;
    }
    await fh.sync();
    // The identity of what this call wrote, taken from its own handle (a stat of the path after the rename could
    // already see another process's file).
    const st = await fh.stat();
    written = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    await fh.close();
    fh = undefined;
    // The check and the rename in one synchronous step: an async rename goes through Node's thread pool, and a process
    // stopped (SIGSTOP) after the check but before that thread ran would still replace the file when it resumes.
    if (stillMine && !stillMine()) throw new WriteAbandoned(`not replacing ${path}: the lock is no longer ours`);
    try {
      renameSync(tmp, path);
    } catch (e) {
      if (tmpDir && (e as NodeJS.ErrnoException).code === "ENOENT")
        throw new WriteAbandoned(`not replacing ${path}: ${tmpDir} was taken away before the rename (the lock was taken over)`);
      throw e;
    }
  } catch (e) {
    await fh?.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  // Make the rename itself durable; not every file system lets a directory be opened for that.
  const dir = await open(dirname(path), "r").catch(() => undefined);
  await dir?.sync().catch(() => {});
  await dir?.close().catch(() => {});
  return written!;
}

import { open } from "node:fs/promises";

/** Reads from `offset` to the end of the file: the cost is the new bytes, not the whole file. */
export async function readFrom(path: string, offset: number, maxBytes = 8 * 1024 * 1024): Promise<{ text: string; end: number; size: number }> {
  let fh;
  try {
    fh = await open(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { text: "", end: offset, size: 0 };
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const start = Math.min(offset, size);
    const len = Math.min(size - start, maxBytes);
    if (len <= 0) return { text: "", end: start, size };
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, start);
    return { text: buf.subarray(0, bytesRead).toString("utf8"), end: start + bytesRead, size };
  } finally {
    await fh.close();
  }
}

/** The last `bytes` bytes of a file (starting at a line boundary when possible). */
export async function readTail(path: string, bytes: number): Promise<{ text: string; end: number }> {
  let fh;
  try {
    fh = await open(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { text: "", end: 0 };
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    const { bytesRead } = await fh.read(buf, 0, buf.length, start);
    let text = buf.subarray(0, bytesRead).toString("utf8");
    if (start > 0) {
      const nl = text.indexOf("\n");
      if (nl >= 0) text = text.slice(nl + 1);
    }
    return { text, end: start + bytesRead };
  } finally {
    await fh.close();
  }
}

import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";

/**
 * A regular file's first bytes, read without ever blocking: opened with O_NONBLOCK (a FIFO opens at once instead of
 * waiting for a writer), checked with fstat on the very descriptor before a byte is read (nothing swapped in
 * between), and capped at `maxBytes` (`truncated` says there was more). Anything but a regular file (FIFO, socket,
 * device, directory) throws an error with code "ENOTREG"; open errors (ENOENT, EACCES …) are the system's.
 */
export interface RegularRead {
  data: Buffer;
  truncated: boolean;
  st: Stats;
}

const RD = constants.O_RDONLY | constants.O_NONBLOCK;

function notRegular(path: string, st: Stats): Error {
  const kind = st.isFIFO()
    ? "a FIFO"
    : st.isSocket()
      ? "a socket"
      : st.isDirectory()
        ? "a directory"
        : st.isCharacterDevice() || st.isBlockDevice()
          ? "a device"
          : "not a regular file";
  return Object.assign(new Error(`${path} is ${kind}, not a regular file`), { code: "ENOTREG" });
}

export async function readRegular(path: string, maxBytes: number): Promise<RegularRead> {
  const fh = await open(path, RD);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(path, st);
    const buf = Buffer.alloc(Math.min(Math.max(st.size, 65_536), maxBytes) + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (!bytesRead) break;
      n += bytesRead;
    }
    return { data: buf.subarray(0, Math.min(n, maxBytes)), truncated: n > maxBytes, st };
  } finally {
    await fh.close();
  }
}

/** readRegular, synchronously (start-up files). */
export function readRegularSync(path: string, maxBytes: number): RegularRead {
  const fd = openSync(path, RD);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(path, st);
    const buf = Buffer.alloc(Math.min(Math.max(st.size, 65_536), maxBytes) + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (!got) break;
      n += got;
    }
    return { data: buf.subarray(0, Math.min(n, maxBytes)), truncated: n > maxBytes, st };
  } finally {
    closeSync(fd);
  }
}

/** Length of the longest prefix of `buf` that ends on a whole UTF-8 character. */
export function utf8Complete(buf: Buffer): number {
  let i = buf.length;
  // Step back over at most 3 continuation bytes to the lead byte of the last character.
  let back = 0;
  while (back < 4 && i - back - 1 >= 0 && (buf[i - back - 1]! & 0xc0) === 0x80) back++;
  const lead = i - back - 1;
  if (lead < 0) return buf.length;
  const b = buf[lead]!;
  const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return back + 1 >= need ? buf.length : lead;
}

/**
 * Reads from `offset` to the end of the file: the cost is the new bytes, not the whole file. Bytes are cut
 * before decoding so a writer caught mid-way never yields a broken character: `upTo: "utf8"` stops after the
 * last whole character, `upTo: "line"` after the last newline. `end` is the offset to continue from.
 */
export async function readFrom(
  path: string,
  offset: number,
  opts: { upTo?: "utf8" | "line"; maxBytes?: number } = {},
): Promise<{ text: string; end: number; size: number }> {
  const maxBytes = opts.maxBytes ?? 8 * 1024 * 1024;
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
    let got = buf.subarray(0, bytesRead);
    if (opts.upTo === "line") {
      const nl = got.lastIndexOf(0x0a);
      // A single line longer than maxBytes cannot be read whole: skip it rather than stall.
      got = nl >= 0 ? got.subarray(0, nl + 1) : bytesRead === maxBytes ? got : got.subarray(0, 0);
    } else {
      got = got.subarray(0, utf8Complete(got));
    }
    return { text: got.toString("utf8"), end: start + got.length, size };
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
    let from = 0;
    while (start > 0 && from < bytesRead && (buf[from]! & 0xc0) === 0x80) from++; // began inside a character
    const got = buf.subarray(from, utf8Complete(buf.subarray(0, bytesRead)));
    let text = got.toString("utf8");
    if (start > 0) {
      const nl = text.indexOf("\n");
      if (nl >= 0) text = text.slice(nl + 1);
    }
    return { text, end: start + from + got.length };
  } finally {
    await fh.close();
  }
}

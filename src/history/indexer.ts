/**
 * Builds and updates the index from the transcripts. Incremental: each file's inode, size and byte offset
 * are remembered and only whole lines appended since are read; a replaced or truncated file is read again.
 * The work is a generator that stops after each committed batch, so a caller can pause between batches
 * (the worker thread reports progress there; inline use yields to the event loop).
 */
import { closeSync, fstatSync, openSync, readSync, rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { parseLine } from "./lines.js";
import { refForPath, scanTranscripts, type TranscriptRef } from "./scan.js";
import { ensureSchema, isCorruption, tune } from "./schema.js";
import { IndexWriter } from "./writer.js";
import { ensurePrivateFile, SQLITE_FILES } from "../util/fs/private-file.js";

export interface SyncStats {
  files_seen: number;
  files_read: number;
  bytes_read: number;
  lines: number;
  files_removed: number;
  rebuilt: boolean;
  ms: number;
}

const CHUNK = 4 * 1024 * 1024;
const BATCH_BYTES = 16 * 1024 * 1024;
const BATCH_MS = 500;

type Row = Record<string, unknown>;
const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0);

export function removeDbFiles(dbPath: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(dbPath + suffix, { force: true });
}

export class Indexer {
  private db!: DatabaseSync;
  private w!: IndexWriter;
  /** Set when open() found the file missing, corrupt or of another schema and started it afresh. */
  rebuilt = false;

  constructor(
    readonly dbPath: string,
    readonly configDir: string,
    private readonly onReset: () => void = () => {},
    /** How long one batch may hold the thread (longer batches build faster: fewer FTS segments to merge). */
    private readonly batchMs = BATCH_MS,
  ) {
    this.open();
  }

  private open(): void {
    try {
      ensurePrivateFile(this.dbPath, SQLITE_FILES);
      this.db = new DatabaseSync(this.dbPath);
      tune(this.db);
      if (ensureSchema(this.db)) {
        this.w = new IndexWriter(this.db);
        return;
      }
    } catch (e) {
      if (!isCorruption(e)) throw e;
    }
    this.reset();
  }

  /** Deletes the file and starts an empty index. */
  reset(): void {
    try {
      this.db?.close();
    } catch {
      // already closed or unusable: it is being deleted anyway
    }
    removeDbFiles(this.dbPath);
    ensurePrivateFile(this.dbPath, SQLITE_FILES);
    this.db = new DatabaseSync(this.dbPath);
    tune(this.db);
    ensureSchema(this.db);
    this.w = new IndexWriter(this.db);
    this.rebuilt = true;
    this.onReset();
  }

  close(): void {
    this.db.close();
  }

  /**
   * Brings the index up to date: every transcript (`paths` absent) or just the ones named. Yields after
   * each committed batch. A corrupt database is deleted and built again from the transcripts.
   */
  *sync(paths?: string[]): Generator<SyncStats, SyncStats> {
    const t0 = performance.now();
    const stats: SyncStats = {
      files_seen: 0,
      files_read: 0,
      bytes_read: 0,
      lines: 0,
      files_removed: 0,
      rebuilt: this.rebuilt,
      ms: 0,
    };
    try {
      yield* this.syncInner(paths, stats, t0);
    } catch (e) {
      if (!isCorruption(e)) throw e;
      this.reset();
      stats.rebuilt = true;
      yield* this.syncInner(undefined, stats, t0);
    }
    this.rebuilt = false;
    stats.ms = performance.now() - t0;
    return stats;
  }

  private *syncInner(paths: string[] | undefined, stats: SyncStats, t0: number): Generator<SyncStats, void> {
    const refs = paths
      ? paths.map((p) => refForPath(this.configDir, p)).filter((r): r is TranscriptRef => r !== undefined)
      : scanTranscripts(this.configDir);
    stats.files_seen += refs.length;
    let batchBytes = 0;
    let batchStart = performance.now();
    this.db.exec("BEGIN");
    try {
      for (const ref of refs) {
        for (const bytes of this.readFile(ref, stats)) {
          batchBytes += bytes;
          if (batchBytes >= BATCH_BYTES || performance.now() - batchStart >= this.batchMs) {
            this.w.flush();
            this.db.exec("COMMIT");
            stats.ms = performance.now() - t0;
            yield stats;
            this.db.exec("BEGIN");
            batchBytes = 0;
            batchStart = performance.now();
          }
        }
      }
      if (!paths) stats.files_removed = this.removeMissing(new Set(refs.map((r) => r.path)));
      this.w.resolveSummaries(!paths);
      this.w.flush();
      if (!paths) this.db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('complete', ?)").run(new Date().toISOString());
      this.db.exec("COMMIT");
    } catch (e) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw e;
    }
  }

  /** Reads what is new in one file, yielding the bytes consumed after each chunk (inside the caller's transaction). */
  private *readFile(ref: TranscriptRef, stats: SyncStats): Generator<number, void> {
    let fd: number;
    try {
      fd = openSync(ref.path, "r");
    } catch {
      return;
    }
    try {
      const st = fstatSync(fd);
      const ino = `${st.dev}:${st.ino}`;
      let row: Row | undefined = this.db.prepare("SELECT id, conv, ino, size, offset FROM files WHERE path = ?").get(ref.path);
      const conv = this.w.conversation(ref.claudeSessionId, ref.project);
      if (row && (String(row.ino) !== ino || st.size < num(row.offset))) {
        this.w.forgetFile(num(row.id), num(row.conv), ref.subagent);
        this.db.prepare("UPDATE files SET ino = ?, size = 0, offset = 0 WHERE id = ?").run(ino, num(row.id));
        row = { ...row, offset: 0 };
      }
      if (!row) {
        const id = this.db
          .prepare("INSERT INTO files(path, conv, subagent, ino, size, offset) VALUES (?, ?, ?, ?, 0, 0)")
          .run(ref.path, conv.id, ref.subagent ? 1 : 0, ino).lastInsertRowid;
        row = { id, conv: conv.id, offset: 0 };
      }
      const fileId = num(row.id);
      let offset = num(row.offset);
      if (offset >= st.size) return;
      stats.files_read += 1;
      const c = this.w.load(conv.id);
      let buf = Buffer.allocUnsafe(Math.min(CHUNK, st.size - offset));
      while (offset < st.size) {
        const want = Math.min(buf.length, st.size - offset);
        const got = readSync(fd, buf, 0, want, offset);
        if (got <= 0) break;
        const nl = buf.lastIndexOf(0x0a, got - 1);
        if (nl < 0) {
          if (offset + got >= st.size) break; // a line still being written
          buf = Buffer.allocUnsafe(buf.length * 2); // one line longer than the buffer
          continue;
        }
        const text = buf.toString("utf8", 0, nl + 1);
        for (const line of text.split("\n")) {
          if (!line) continue;
          stats.lines += 1;
          const p = parseLine(line);
          if (p) this.w.apply(c, fileId, p, ref.subagent);
        }
        offset += nl + 1;
        stats.bytes_read += nl + 1;
        if (!ref.subagent) c.size = st.size;
        this.db.prepare("UPDATE files SET size = ?, offset = ? WHERE id = ?").run(st.size, offset, fileId);
        yield nl + 1;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Forgets files that are gone from disk (and conversations left with no file). */
  private removeMissing(present: Set<string>): number {
    let n = 0;
    for (const r of this.db.prepare("SELECT id, path, conv, subagent FROM files").all()) {
      if (present.has(String(r.path))) continue;
      this.w.forgetFile(num(r.id), num(r.conv), num(r.subagent) === 1);
      this.db.prepare("DELETE FROM files WHERE id = ?").run(num(r.id));
      this.w.dropConversation(num(r.conv));
      n++;
    }
    return n;
  }
}

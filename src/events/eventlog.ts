/**
 * A session's events log (events.jsonl): appended by Claude's hook command, by hook.sh (a pane's exit) and by the
 * orchestrator itself (appender.ts: its own events, a headless session's hook callbacks), all under one flock; read
 * here from a byte offset whenever fs.watch says it grew. A partial
 * last line (a hook still writing) is left for the next read, cut as bytes so no character breaks.
 *
 * Faults it survives: a writer killed half-way leaves a torn line; writers start every record with a
 * newline, and for logs written without one (older servers' hooks) a line that does not parse is
 * resynchronised on the last object start that does. A line longer than the cap (8 MiB by default) is
 * not read whole: its `hook_event_name` (and `session_id`) are picked out as it streams past and a
 * minimal event of that name (`oversized: true`) stands for it, so a huge Stop still ends the turn.
 */
import { watch, type FSWatcher } from "node:fs";
import { appendFile, mkdir, open, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { lockedAppend, logLine } from "./appender.js";
import { HOOK_EVENTS, OWN_EVENTS, parseEventLine, type LogEvent } from "./reducer.js";

/** The longest event line read whole; a longer one becomes a minimal event of the same name. */
export const MAX_EVENT_LINE_BYTES = 8 * 1024 * 1024;
/** Resync: at most this many object starts are tried in a line that does not parse. */
const RESYNC_TRIES = 100;

/**
 * One log line as an event. A line that does not parse may be a torn line with a whole event after it:
 * JSON strings escape their quotes, so `{"` (or `{ "`) only ever starts an object, and the only suffix
 * that parses as a whole object to the end of the line is the event written after the tear.
 */
export function parseLogLine(line: string): LogEvent | undefined {
  const ev = parseEventLine(line);
  if (ev) return ev;
  const starts = /\{\s*"/g;
  starts.lastIndex = 1;
  for (let tries = 0, m = starts.exec(line); m && tries < RESYNC_TRIES; tries++, m = starts.exec(line)) {
    const found = parseEventLine(line.slice(m.index));
    if (found) return found;
    starts.lastIndex = m.index + 1;
  }
  return undefined;
}

const KNOWN_NAMES: ReadonlySet<string> = new Set<string>([...HOOK_EVENTS, ...OWN_EVENTS]);
const NAME_RE = /"hook_event_name"\s*:\s*"([A-Za-z_:]{1,64})"/;
const SESSION_RE = /"session_id"\s*:\s*"([A-Za-z0-9_.:-]{1,128})"/;
/** Bytes of one chunk kept for the next, so a key split across two reads is still found. */
const CARRY = 256;

/** What is known of an oversized line while it streams past. */
interface Skipping {
  name?: string;
  sessionId?: string;
  bytes: number;
  carry: string;
}

function scan(sk: Skipping, chunk: Buffer): void {
  const text = sk.carry + chunk.toString("latin1");
  if (!sk.name) {
    const m = NAME_RE.exec(text);
    if (m && KNOWN_NAMES.has(m[1]!)) sk.name = m[1];
  }
  if (!sk.sessionId) {
    const m = SESSION_RE.exec(text);
    if (m) sk.sessionId = m[1];
  }
  sk.bytes += chunk.length;
  sk.carry = text.slice(-CARRY);
}

/** Up to `max` bytes from `offset`, and the file's size (smaller than `offset` once the log was compacted). */
async function readChunk(path: string, offset: number, max: number): Promise<{ buf: Buffer; size: number }> {
  let fh;
  try {
    fh = await open(path, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { buf: Buffer.alloc(0), size: 0 };
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const len = Math.min(Math.max(0, size - offset), max);
    if (len <= 0) return { buf: Buffer.alloc(0), size };
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, offset);
    return { buf: buf.subarray(0, bytesRead), size };
  } finally {
    await fh.close();
  }
}

/** Appends one of the server's own events under the lock the hooks take, so lines never interleave. */
export function appendEvent(eventsPath: string, ev: LogEvent): Promise<void> {
  return lockedAppend(eventsPath, logLine(ev));
}

/**
 * Makes a log that is not there yet with `ev` as its first line; false (nothing written) when it is there. Made
 * exclusively (`wx`), it has had no other writer and no compaction, so this line needs no lock.
 */
export function createLogWith(eventsPath: string, ev: LogEvent): Promise<boolean> {
  return writeFile(eventsPath, logLine(ev), { flag: "wx", mode: 0o600 }).then(
    () => true,
    (e: NodeJS.ErrnoException) => (e.code === "EEXIST" ? false : Promise.reject(e)),
  );
}

export class EventTail {
  private offset = 0;
  private watcher: FSWatcher | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private skipping: Skipping | undefined;
  private readonly maxLine: number;

  constructor(
    readonly path: string,
    private readonly onEvents: (events: LogEvent[]) => void,
    private readonly onError: (e: unknown) => void = () => {},
    opts: { maxLineBytes?: number } = {},
  ) {
    this.maxLine = Math.max(1024, opts.maxLineBytes ?? MAX_EVENT_LINE_BYTES);
  }

  /**
   * Reads everything there is, then follows the file. A log that is not there yet (a record reserved by a server
   * killed before it made the session's directory) is created empty: there is nothing to read, and a watch needs
   * a file.
   */
  async start(): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await appendFile(this.path, "", { mode: 0o600 });
    this.watcher = watch(this.path, { persistent: false }, () => void this.poke());
    this.watcher.on("error", (e) => this.onError(e));
    await this.poke();
  }

  /** Reads what was appended since the last read; concurrent calls coalesce into one more read. */
  poke(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          await this.readOnce();
        } while (this.again && !this.closed);
      } catch (e) {
        this.onError(e);
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    for (;;) {
      const { buf, size } = await readChunk(this.path, this.offset, this.maxLine);
      if (size < this.offset) {
        // Compacted (compact.ts): the log now starts with a snapshot of the fold; read it from the start.
        this.offset = 0;
        this.skipping = undefined;
        continue;
      }
      if (!buf.length) return;
      const events: LogEvent[] = [];
      const ts = new Date().toISOString();
      let used: number;
      if (this.skipping) {
        // The rest of an oversized line: look for its name until it ends.
        const nl = buf.indexOf(0x0a);
        scan(this.skipping, nl < 0 ? buf : buf.subarray(0, nl));
        if (nl < 0) {
          this.offset += buf.length;
          if (buf.length < this.maxLine) return;
          continue;
        }
        const sk = this.skipping;
        this.skipping = undefined;
        used = nl + 1;
        if (sk.name) {
          const ev: LogEvent = { hook_event_name: sk.name as LogEvent["hook_event_name"], oversized: true, ts };
          if (sk.sessionId) ev.session_id = sk.sessionId;
          events.push(ev);
        }
        const readAs = sk.name ? `a bare ${sk.name}` : "nothing (no event name found)";
        this.onError(
          new Error(`an event line of ${sk.bytes} bytes (over ${this.maxLine}) in ${this.path} was read as ${readAs}`),
        );
      } else {
        // Whole lines only: a hook may be half-way through writing the next one.
        const nl = buf.lastIndexOf(0x0a);
        if (nl < 0) {
          if (buf.length < this.maxLine) return;
          this.skipping = { bytes: 0, carry: "" };
          scan(this.skipping, buf);
          this.offset += buf.length;
          continue;
        }
        used = nl + 1;
        for (const line of buf.subarray(0, nl).toString("utf8").split("\n")) {
          const ev = parseLogLine(line);
          if (ev) events.push(ev.ts ? ev : { ...ev, ts });
        }
      }
      this.offset += used;
      if (events.length) this.onEvents(events);
    }
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
  }
}

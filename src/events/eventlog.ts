/**
 * A session's events log (events.jsonl): appended by Claude's hooks through hook.sh and by the
 * orchestrator itself, read here from a byte offset whenever fs.watch says it grew. A partial
 * last line (a hook still writing) is left for the next read, cut as bytes so no character breaks.
 */
import { watch, type FSWatcher } from "node:fs";
import { run } from "../util/exec.js";
import { readFrom } from "../util/files.js";
import { assertOwnedScript } from "../util/owned.js";
import { parseEventLine, type LogEvent } from "./reducer.js";

/** Appends one event through the same locked path the hooks use, so lines never interleave. */
export async function appendEvent(hookScript: string, eventsPath: string, ev: LogEvent): Promise<void> {
  await assertOwnedScript(hookScript);
  const r = await run(hookScript, [eventsPath], { input: JSON.stringify(ev) + "\n" });
  if (r.code !== 0) throw new Error(`appending to ${eventsPath} failed: ${r.stderr}`);
}

export class EventTail {
  private offset = 0;
  private watcher: FSWatcher | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly onEvents: (events: LogEvent[]) => void,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  /** Reads everything there is, then follows the file. */
  async start(): Promise<void> {
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
      // Whole lines only: a hook may be half-way through writing the next one.
      const { text, end } = await readFrom(this.path, this.offset, { upTo: "line" });
      if (end === this.offset) return;
      this.offset = end;
      const events: LogEvent[] = [];
      const ts = new Date().toISOString();
      for (const line of text.split("\n")) {
        const ev = parseEventLine(line);
        if (ev) events.push(ev.ts ? ev : { ...ev, ts });
      }
      if (events.length) this.onEvents(events);
    }
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
  }
}

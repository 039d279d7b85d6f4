/**
 * A pty session's output and exit: every byte goes to the raw log (bounded: rotated past its cap, capture.ts) and to
 * the session's headless terminal; reading from the pty pauses while either lags (the program then blocks on its
 * output, memory stays bounded). Its exit is recorded as tmux's pane-died hook records one: the raw log flushed,
 * then `cs:exit` appended by the hook script.
 */
import type { WriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Terminal as XTerm } from "@xterm/headless";
import { run } from "../../../util/proc/exec.js";
import { OUTPUT_LOG_MAX_BYTES, rotate } from "../capture.js";
import type { PtyChild, PtyDisposable } from "./node-pty.js";

/** What the output path needs of the host's options. */
export interface OutputOptions {
  /** Script that appends a line to an events log under a lock: `hook.sh <events> exit <status>`. */
  hookScript: string;
  /** Where the backend reports trouble it can live with (a raw log that cannot be written). */
  log?: { warn(msg: string): void };
  /** Raw output past this many bytes moves to output.log.1 (capture.ts; default 64 MiB). */
  outputMaxBytes?: number;
}

/** Output waiting for the headless terminal above which reading from the pty pauses (bounded memory). */
const HIGH_WATER = 1 << 20;
const LOW_WATER = 1 << 18;

/** One pty session: its process, its terminal, its raw log and where its output's flow stands. */
export interface PtySession {
  readonly id: string;
  readonly pid: number;
  readonly pty: PtyChild;
  readonly term: XTerm;
  readonly log: WriteStream;
  readonly eventsPath: string;
  readonly generation: number | undefined;
  readonly subscriptions: PtyDisposable[];
  /** Set when the process has ended (signal deaths as 128 + signal, as a shell reports them). */
  exitCode?: number;
  /** Resolves when the process has ended. */
  readonly exited: Promise<void>;
  /** Resolves once the raw log is flushed and the cs:exit event is in the events log. */
  recorded: Promise<void>;
  /** Characters written to the terminal that it has not parsed yet. */
  pending: number;
  logBlocked: boolean;
  /** Bytes in the raw log since it was started or last rotated. */
  logBytes: number;
  rotating: boolean;
  logEnded: boolean;
  paused: boolean;
  disposed: boolean;
}

/** A piece of the program's output: to the raw log (counted for its rotation) and to the terminal. */
export function onOutput(s: PtySession, data: string, o: OutputOptions): void {
  if (!s.logEnded) countLog(s, Buffer.byteLength(data), o);
  if (!s.logEnded && !s.log.write(data) && !s.logBlocked) {
    s.logBlocked = true;
    s.log.once("drain", () => {
      s.logBlocked = false;
      flow(s);
    });
  }
  if (s.disposed) return;
  s.pending += data.length;
  s.term.write(data, () => {
    s.pending -= data.length;
    if (s.paused) flow(s);
  });
  flow(s);
}

/** Past the cap, once what was written so far is on disk: copy to .1 and empty in place (writes go on appending). */
function countLog(s: PtySession, n: number, o: OutputOptions): void {
  s.logBytes += n;
  if (s.rotating || s.logBytes <= (o.outputMaxBytes ?? OUTPUT_LOG_MAX_BYTES)) return;
  s.rotating = true;
  const path = s.log.path.toString();
  s.log.write("", () => {
    void rotate(path)
      .catch((e: unknown) => o.log?.warn(`rotating the raw log of pty session ${s.id}: ${String(e)}`))
      // What was written while rotating is in the new file already: count from its real size.
      .then(() =>
        stat(path).then(
          (st) => st.size,
          () => 0,
        ),
      )
      .then((size) => {
        s.logBytes = size;
        s.rotating = false;
      });
  });
}

/** Stops reading from the pty while the raw log or the terminal lags (the program then blocks on output). */
export function flow(s: PtySession): void {
  if (s.exitCode !== undefined) return;
  if (!s.paused && (s.logBlocked || s.pending > HIGH_WATER)) {
    s.paused = true;
    s.pty.pause();
  } else if (s.paused && !s.logBlocked && s.pending <= LOW_WATER) {
    s.paused = false;
    s.pty.resume();
  }
}

/** Flushes the raw log, then appends cs:exit to the events log exactly as tmux's pane-died hook does. */
export async function recordExit(s: PtySession, o: OutputOptions): Promise<void> {
  if (!s.logEnded) {
    s.logEnded = true;
    await new Promise<void>((r) => s.log.end(() => r()));
  }
  try {
    await run(o.hookScript, [
      s.eventsPath,
      "exit",
      String(s.exitCode),
      ...(s.generation === undefined ? [] : [String(s.generation)]),
    ]);
  } catch (e) {
    o.log?.warn(`recording the exit of pty session ${s.id}: ${String(e)}`);
  }
}

/** Resolves once the terminal has parsed everything written to it so far (bounded: a disposed one never answers). */
export async function settled(term: XTerm): Promise<void> {
  await within(new Promise<void>((r) => term.write("", r)), 2000);
}

/** Whether `p` settles within `ms` (one timer, cleared as soon as it does). */
export function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/**
 * pty backend: each session is a pseudo-terminal owned by this server process (node-pty), with a
 * headless xterm fed the same output so the screen can be read as text. A session lives only as long
 * as this process (survivesRestart false): when the server goes, the terminal's master side closes
 * and the kernel hangs up the session.
 *
 * Everything is event-driven: output, exit and waits are callbacks, so an idle session costs no CPU.
 * node-pty is loaded on first construction (createRequire), so a machine where the optional native
 * addon did not build only loses this backend; the type checker needs no node-pty types either.
 */
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import xtermHeadless from "@xterm/headless";
import type { Terminal as XTerm } from "@xterm/headless";
import {
  inProcessRef,
  ownedInProcess,
  type HostRef,
  type TerminalHost,
  type Key,
  type KillResult,
  type Liveness,
  type TerminalPlan,
  type Spawned,
} from "../../host.js";
import { run } from "../../../util/proc/exec.js";
import { OUTPUT_LOG_MAX_BYTES, rotate } from "../capture.js";
import { SessionError } from "../../../core/errors.js";
import { signalGroup } from "../../../util/proc/process.js";
import { killTree } from "../../end-tree.js";

/** The part of node-pty this backend uses (node-pty's IPty / spawn, declared here on purpose: see above). */
interface PtyDisposable {
  dispose(): void;
}
interface PtyChild {
  readonly pid: number;
  onData(listener: (data: string) => void): PtyDisposable;
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): PtyDisposable;
  write(data: string): void;
  pause(): void;
  resume(): void;
}
interface NodePty {
  spawn(
    file: string,
    args: string[],
    opts: { name: string; cols: number; rows: number; cwd: string; env: Record<string, string>; encoding: "utf8" },
  ): PtyChild;
}

let nodePty: NodePty | undefined;
/** Loads node-pty (and its native addon); throws when it is missing or was built for another Node. */
export function loadNodePty(): NodePty {
  nodePty ??= createRequire(import.meta.url)("node-pty") as NodePty;
  return nodePty;
}

export interface PtyOptions {
  /** Script that appends a line to an events log under a lock: `hook.sh <events> exit <status>`. */
  hookScript: string;
  /** Lines kept above the visible screen by each session's terminal (default 1000). */
  scrollback?: number;
  /** Where the backend reports trouble it can live with (a raw log that cannot be written). */
  log?: { warn(msg: string): void };
  /** Raw output past this many bytes moves to output.log.1 (capture.ts; default 64 MiB). */
  outputMaxBytes?: number;
}

const DEFAULT_SCROLLBACK = 1000;
/** Output waiting for the headless terminal above which reading from the pty pauses (bounded memory). */
const HIGH_WATER = 1 << 20;
const LOW_WATER = 1 << 18;
/** close(): how long sessions get to end on SIGTERM (Claude runs its SessionEnd hooks) before SIGKILL. */
const CLOSE_GRACE_MS = 3000;
/** After SIGKILL: how long to wait for the exit to be seen and recorded. */
const KILL_WAIT_MS = 5000;
/** A lone Escape followed at once by another key reads as Alt+key: leave a gap, as a person would. */
const ESCAPE_GAP_MS = 30;

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

const KEY_BYTES: Record<Key, string> = {
  Enter: "\r",
  Escape: "\x1b",
  Up: "\x1b[A",
  Down: "\x1b[B",
  Tab: "\t",
  BTab: "\x1b[Z",
  "C-c": "\x03",
  "1": "1",
  "2": "2",
  "3": "3",
  "4": "4",
};

/** Variables that describe some other terminal than ours. */
const FOREIGN_TERMINAL_ENV = ["TMUX", "TMUX_PANE", "STY", "WINDOW", "WINDOWID", "TERMCAP", "COLUMNS", "LINES"];

/**
 * node-pty 1.1.0 does not mark a pty's master fd close-on-exec on Linux (microsoft/node-pty#657), so
 * every later child would inherit the masters of all earlier sessions: a session could type into
 * another one, and a dead server's sessions would not all be hung up. This prelude closes every fd
 * above 2 and execs the program (same pid, same environment, except that bash adds SHLVL=0 when it was unset).
 * --posix: a non-interactive bash would otherwise source $BASH_ENV.
 */
const CLOSE_FDS_AND_EXEC =
  'for f in /proc/$$/fd/*; do n=${f##*/}; case $n in ""|*[!0-9]*|0|1|2) ;; *) eval "exec $n>&-" ;; esac; done; exec "$@"';

interface PtySession {
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

export class PtyHost implements TerminalHost {
  readonly kind = "pty" as const;
  readonly survivesRestart = false;
  private readonly pty: NodePty;
  private readonly sessions = new Map<string, PtySession>();
  private readonly scrollback: number;
  private readonly bash: string | undefined;
  private closed = false;

  constructor(private readonly opts: PtyOptions) {
    this.pty = loadNodePty();
    this.scrollback = Math.max(0, Math.floor(opts.scrollback ?? DEFAULT_SCROLLBACK));
    this.bash = process.platform === "linux" ? ["/bin/bash", "/usr/bin/bash"].find((p) => existsSync(p)) : undefined;
  }

  /** Its sessions live in a server process: this one's, or another live one's (that one reaches them). */
  owns(ref: HostRef | undefined): boolean {
    return ownedInProcess(ref);
  }

  async spawn(spec: TerminalPlan): Promise<Spawned> {
    if (this.closed) throw new SessionError("PROCESS_ERROR", "the pty backend is shutting down.");
    const old = this.sessions.get(spec.id);
    if (old && old.exitCode === undefined)
      throw new SessionError("INVALID_ARGUMENT", `a pty session ${spec.id} is still running.`);
    if (old) this.dispose(old);
    if (!spec.argv.length) throw new SessionError("INVALID_ARGUMENT", "nothing to run: argv is empty.");

    const env: Record<string, string> = { ...spec.env };
    for (const k of FOREIGN_TERMINAL_ENV) delete env[k];
    env.TERM ||= "xterm-256color";
    const [file, args] = this.bash
      ? [this.bash, ["--posix", "-c", CLOSE_FDS_AND_EXEC, "claude-sessions", ...spec.argv]]
      : [spec.argv[0]!, spec.argv.slice(1)];

    let child: PtyChild;
    try {
      child = this.pty.spawn(file, args, {
        name: env.TERM,
        cols: spec.cols,
        rows: spec.rows,
        cwd: spec.cwd,
        env,
        encoding: "utf8",
      });
    } catch (e) {
      throw new SessionError(
        "PROCESS_ERROR",
        `could not start a pty for ${spec.argv[0]}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const term = new xtermHeadless.Terminal({
      cols: spec.cols,
      rows: spec.rows,
      scrollback: this.scrollback,
      allowProposedApi: true,
      logLevel: "off",
    });
    const log = createWriteStream(spec.rawLogPath, { flags: "a", mode: 0o600 });
    let markExited!: () => void;
    const s: PtySession = {
      id: spec.id,
      pid: child.pid,
      pty: child,
      term,
      log,
      eventsPath: spec.eventsPath,
      generation: spec.generation,
      subscriptions: [],
      exited: new Promise<void>((r) => (markExited = r)),
      recorded: Promise.resolve(),
      pending: 0,
      logBlocked: false,
      logBytes: 0,
      rotating: false,
      logEnded: false,
      paused: false,
      disposed: false,
    };
    log.on("error", (e) => {
      if (!s.logEnded) this.opts.log?.warn(`raw log of pty session ${spec.id} (${spec.rawLogPath}): ${e.message}`);
      s.logEnded = true;
      s.logBlocked = false;
      this.flow(s);
    });
    s.subscriptions.push(
      child.onData((data) => this.onOutput(s, data)),
      // Answers the terminal gives to the program's queries (cursor position, device attributes…).
      term.onData((reply) => {
        if (s.exitCode === undefined) child.write(reply);
      }),
      child.onExit(({ exitCode, signal }) => {
        s.exitCode = signal ? 128 + signal : exitCode;
        s.recorded = this.recordExit(s);
        markExited();
      }),
    );
    this.sessions.set(spec.id, s);
    return { pid: child.pid, ref: inProcessRef() };
  }

  private onOutput(s: PtySession, data: string): void {
    if (!s.logEnded) this.countLog(s, Buffer.byteLength(data));
    if (!s.logEnded && !s.log.write(data) && !s.logBlocked) {
      s.logBlocked = true;
      s.log.once("drain", () => {
        s.logBlocked = false;
        this.flow(s);
      });
    }
    if (s.disposed) return;
    s.pending += data.length;
    s.term.write(data, () => {
      s.pending -= data.length;
      if (s.paused) this.flow(s);
    });
    this.flow(s);
  }

  /** Past the cap, once what was written so far is on disk: copy to .1 and empty in place (writes go on appending). */
  private countLog(s: PtySession, n: number): void {
    s.logBytes += n;
    if (s.rotating || s.logBytes <= (this.opts.outputMaxBytes ?? OUTPUT_LOG_MAX_BYTES)) return;
    s.rotating = true;
    const path = s.log.path.toString();
    s.log.write("", () => {
      void rotate(path)
        .catch((e: unknown) => this.opts.log?.warn(`rotating the raw log of pty session ${s.id}: ${String(e)}`))
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
  private flow(s: PtySession): void {
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
  private async recordExit(s: PtySession): Promise<void> {
    if (!s.logEnded) {
      s.logEnded = true;
      await new Promise<void>((r) => s.log.end(() => r()));
    }
    try {
      await run(this.opts.hookScript, [
        s.eventsPath,
        "exit",
        String(s.exitCode),
        ...(s.generation === undefined ? [] : [String(s.generation)]),
      ]);
    } catch (e) {
      this.opts.log?.warn(`recording the exit of pty session ${s.id}: ${String(e)}`);
    }
  }

  private find(id: string): PtySession {
    const s = this.sessions.get(id);
    if (!s || s.disposed) throw new SessionError("SESSION_DEAD", `the pty session ${id} is gone.`);
    return s;
  }

  private running(id: string): PtySession {
    const s = this.find(id);
    if (s.exitCode !== undefined)
      throw new SessionError("SESSION_DEAD", `the process in pty session ${id} has ended (exit ${s.exitCode}).`);
    return s;
  }

  async paste(id: string, text: string): Promise<void> {
    const s = this.running(id);
    await settled(s.term); // the program may have just switched bracketed paste on
    // Paste markers inside the text would end the paste early and turn the rest into keystrokes.
    const clean = text.split(PASTE_START).join("").split(PASTE_END).join("");
    // A terminal sends a pasted line break as CR, as tmux paste-buffer and xterm.js do.
    s.pty.write(s.term.modes.bracketedPasteMode ? PASTE_START + clean.replace(/\r?\n/g, "\r") + PASTE_END : clean);
  }

  async keys(id: string, keys: readonly Key[]): Promise<void> {
    const s = this.running(id);
    await settled(s.term);
    for (const [i, k] of keys.entries()) {
      if (s.exitCode !== undefined) break;
      let bytes = KEY_BYTES[k];
      if (s.term.modes.applicationCursorKeysMode && (k === "Up" || k === "Down")) bytes = k === "Up" ? "\x1bOA" : "\x1bOB";
      s.pty.write(bytes);
      if (k === "Escape" && i < keys.length - 1) await sleep(ESCAPE_GAP_MS);
    }
  }

  /** The visible screen: one line per row, trailing blanks cut, like `tmux capture-pane -p`. */
  async screen(id: string, opts: { above?: number } = {}): Promise<string> {
    const s = this.find(id);
    await settled(s.term);
    const b = s.term.buffer.active;
    const rows: string[] = [];
    const top = Math.max(0, b.baseY - Math.max(0, Math.floor(opts.above ?? 0)));
    // Written blanks too, as tmux does.
    for (let y = top; y < b.baseY + s.term.rows; y++) rows.push((b.getLine(y)?.translateToString(true) ?? "").replace(/ +$/, ""));
    return rows.join("\n") + "\n";
  }

  async list(): Promise<Map<string, Liveness>> {
    const m = new Map<string, Liveness>();
    for (const s of this.sessions.values()) {
      const l: Liveness = { exists: true, alive: s.exitCode === undefined, pid: s.pid };
      if (s.exitCode !== undefined) l.exitCode = s.exitCode;
      m.set(s.id, l);
    }
    return m;
  }

  async kill(id: string, opts: { graceMs: number; pid?: number }): Promise<KillResult> {
    const s = this.sessions.get(id);
    if (!s) return { forced: false };
    return killTree(id, s.exitCode === undefined ? s.pid : undefined, opts.graceMs, async () => {
      let forced = false;
      if (s.exitCode === undefined) {
        let ended = false;
        if (opts.graceMs > 0) {
          signalGroup(s.pid, "SIGTERM");
          ended = await within(s.exited, opts.graceMs);
        }
        if (!ended) {
          forced = true;
          signalGroup(s.pid, "SIGKILL");
          await within(s.exited, KILL_WAIT_MS);
        }
      }
      await within(s.recorded, KILL_WAIT_MS);
      return s.exitCode === undefined ? { forced } : { exitCode: s.exitCode, forced };
    });
  }

  /** Ends the process if it still runs, then drops the terminal. */
  async remove(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (!s) return;
    if (s.exitCode === undefined) await this.kill(id, { graceMs: 1000 });
    else await within(s.recorded, KILL_WAIT_MS);
    if (this.sessions.get(id) === s) this.dispose(s);
  }

  /** Ends every session (SIGTERM to its group, a short grace, then SIGKILL) and waits for their exits. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values()];
    await Promise.all(all.map((s) => this.kill(s.id, { graceMs: CLOSE_GRACE_MS })));
    for (const s of all) this.dispose(s);
  }

  private dispose(s: PtySession): void {
    if (s.disposed) return;
    s.disposed = true;
    for (const d of s.subscriptions) d.dispose();
    s.term.dispose();
    if (!s.logEnded) {
      s.logEnded = true;
      s.log.end();
    }
    if (this.sessions.get(s.id) === s) this.sessions.delete(s.id);
  }
}

/** Resolves once the terminal has parsed everything written to it so far (bounded: a disposed one never answers). */
async function settled(term: XTerm): Promise<void> {
  await within(new Promise<void>((r) => term.write("", r)), 2000);
}

/** Whether `p` settles within `ms` (one timer, cleared as soon as it does). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

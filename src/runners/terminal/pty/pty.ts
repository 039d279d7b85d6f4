/**
 * pty backend: each session is a pseudo-terminal owned by this server process (node-pty), with a
 * headless xterm fed the same output so the screen can be read as text. A session lives only as long
 * as this process (survivesRestart false): when the server goes, the terminal's master side closes
 * and the kernel hangs up the session.
 *
 * Everything is event-driven: output, exit and waits are callbacks, so an idle session costs no CPU
 * (output.ts: the raw log, the terminal fed, the exit recorded). node-pty is loaded on first construction
 * (node-pty.ts), so a machine where the optional native addon did not build only loses this backend.
 */
import { createWriteStream, existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import xtermHeadless from "@xterm/headless";
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
import { SessionError } from "../../../core/errors.js";
import { signalGroup } from "../../../util/proc/process.js";
import { killTree } from "../../end-tree.js";
import { loadNodePty, type NodePty, type PtyChild } from "./node-pty.js";
import { flow, onOutput, recordExit, settled, within, type OutputOptions, type PtySession } from "./output.js";

export interface PtyOptions extends OutputOptions {
  /** Lines kept above the visible screen by each session's terminal (default 1000). */
  scrollback?: number;
}

const DEFAULT_SCROLLBACK = 1000;
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
      flow(s);
    });
    s.subscriptions.push(
      child.onData((data) => onOutput(s, data, this.opts)),
      // Answers the terminal gives to the program's queries (cursor position, device attributes…).
      term.onData((reply) => {
        if (s.exitCode === undefined) child.write(reply);
      }),
      child.onExit(({ exitCode, signal }) => {
        s.exitCode = signal ? 128 + signal : exitCode;
        s.recorded = recordExit(s, this.opts);
        markExited();
      }),
    );
    this.sessions.set(spec.id, s);
    return { pid: child.pid, ref: inProcessRef() };
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

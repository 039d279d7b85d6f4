/**
 * tmux backend: each session is a tmux session `cs-<id>` with one pane running the launcher.
 * Exact targets (`=cs-<id>` for sessions, `=cs-<id>:` for its pane), argv arrays only.
 */
import { randomUUID } from "node:crypto";
import { access, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { TerminalHost, Key, KillResult, Liveness, TerminalPlan, Spawned } from "../../host.js";
import { ExecError, run, type RunResult } from "../../../util/proc/exec.js";
import { SessionError } from "../../../core/errors.js";
import { isSafePath, shQuote } from "../../../util/proc/shell.js";
import { assertOwnedScript } from "../../../util/fs/owned.js";
import { OUTPUT_LOG_MAX_BYTES } from "../capture.js";
import { encodeHandoff } from "./launcher.js";
import { isAlive, signalGroup } from "../../../util/proc/process.js";
import { killTree } from "../../end-tree.js";

export interface TmuxOptions {
  /** tmux binary (default "tmux" from PATH). */
  tmuxPath?: string;
  /** -L socket name; tests use a private one. */
  socketName?: string;
  /** -S socket path (wins over socketName). */
  socketPath?: string;
  /** Script that appends a line to an events log under a lock: `hook.sh <events> exit <status>`. */
  hookScript: string;
  /** The launcher (launcher.ts): `launch.sh <hand-off file>`. */
  launchScript: string;
  /** capture.sh (capture.ts): the pipe-pane writer of the raw log, bounded to outputMaxBytes. */
  captureScript?: string;
  outputMaxBytes?: number;
  /** Runs tmux (default: util/exec's run). Tests pass a recorder to assert the exact argv. */
  runner?: typeof run;
}

/** Bracketed paste markers (a terminal sends them around pasted text when the program asked for them). */
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** new-session tries while the tmux server it reached exits under it (SERVER_GONE). */
const NEW_SESSION_ATTEMPTS = 3;
const SERVER_GONE = /server exited unexpectedly|lost server/;

/** How long spawn waits for the launcher to take (and delete) its hand-off file. */
const HANDOFF_TAKEN_MS = 10_000;

/** Variables a tmux client (and a tmux server it may start) gets: never the server's secrets. */
const TMUX_ENV_KEYS = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMUX",
  "TMUX_TMPDIR",
  "TERM",
  "SHELL",
  "TZ",
];

export function sessionName(id: string): string {
  return `cs-${id}`;
}

export class TmuxHost implements TerminalHost {
  readonly kind = "tmux" as const;
  readonly survivesRestart = true;
  private readonly bin: string;
  private readonly base: string[];
  private readonly env: NodeJS.ProcessEnv;
  private bufSeq = 0;
  private serverPid: number | undefined;

  constructor(private readonly opts: TmuxOptions) {
    this.bin = opts.tmuxPath ?? "tmux";
    this.base = opts.socketPath ? ["-S", opts.socketPath] : opts.socketName ? ["-L", opts.socketName] : [];
    const env: NodeJS.ProcessEnv = {};
    for (const k of TMUX_ENV_KEYS) if (process.env[k] !== undefined) env[k] = process.env[k];
    // A private socket must not be redirected by an inherited $TMUX.
    if (this.base.length) delete env.TMUX;
    this.env = env;
  }

  /** tmux sessions outlive servers: any server of the socket reaches them. */
  owns(): boolean {
    return true;
  }

  /** The command a person runs to watch a session. */
  attachCommand(id: string): string {
    const sock = this.opts.socketPath
      ? ` -S ${shQuote(this.opts.socketPath)}`
      : this.opts.socketName
        ? ` -L ${shQuote(this.opts.socketName)}`
        : "";
    return `tmux${sock} attach -t =${sessionName(id)}`;
  }

  attachArgv(id: string): string[] {
    return [this.bin, ...this.base, "attach-session", "-t", `=${sessionName(id)}`];
  }

  private async tmux(args: string[], input?: string): Promise<RunResult> {
    try {
      return await (this.opts.runner ?? run)(this.bin, [...this.base, ...args], {
        env: this.env,
        ...(input === undefined ? {} : { input }),
      });
    } catch (e) {
      if (e instanceof ExecError && e.errno === "ENOENT") {
        throw new SessionError("TMUX_NOT_FOUND", `tmux was not found (${this.bin}).`);
      }
      throw e;
    }
  }

  private async ok(args: string[], input?: string): Promise<string> {
    const r = await this.tmux(args, input);
    if (r.code !== 0) throw new SessionError("PROCESS_ERROR", `tmux ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
    return r.stdout;
  }

  /** tmux's version, or throws TMUX_NOT_FOUND. */
  async version(): Promise<string> {
    return (await this.ok(["-V"])).trim();
  }

  /**
   * Only server-made strings reach tmux here: the session name, sizes, the session's own directory, the
   * launcher's path, the hand-off file's path and the raw log's path (all under the state directory, checked
   * at start-up), each also checked again below. What came from the caller (cwd, argv, env) is in the
   * hand-off file. tmux's TERM is the terminal's; the launcher keeps it.
   */
  async spawn(spec: TerminalPlan): Promise<Spawned> {
    const name = sessionName(spec.id);
    const pane = `=${name}:`;
    await assertOwnedScript(this.opts.launchScript);
    await assertOwnedScript(this.opts.hookScript);
    if (this.opts.captureScript) await assertOwnedScript(this.opts.captureScript);
    for (const p of [
      spec.dir,
      join(spec.dir, "handoff"),
      spec.rawLogPath,
      spec.eventsPath,
      this.opts.launchScript,
      this.opts.hookScript,
      this.opts.captureScript ?? "/",
    ]) {
      if (!isSafePath(p)) throw new SessionError("INTERNAL", `refusing to hand tmux the path ${JSON.stringify(p)}`);
    }
    let out: string | undefined;
    let handoff = "";
    for (let attempt = 1; out === undefined; attempt++) {
      handoff = join(spec.dir, `handoff.${randomUUID()}`);
      try {
        out = await this.newSession(spec, name, pane, handoff);
      } catch (e) {
        // A tmux server that was exiting (its last session had just ended) as this client reached it: its sessions went
        // with it, and the next new-session starts a server of its own (20 starts at once after the last session ended).
        if (attempt >= NEW_SESSION_ATTEMPTS || !(e instanceof SessionError) || !SERVER_GONE.test(e.message)) throw e;
        await sleep(50 * attempt);
      }
    }
    const [paneId, pidText] = out.trim().split(/\s+/);
    const pid = Number(pidText);
    if (!paneId || !Number.isInteger(pid)) {
      await rm(handoff, { force: true });
      throw new SessionError("PROCESS_ERROR", `tmux new-session printed an unexpected answer: ${out.trim()}`);
    }
    await this.handoffTaken(handoff, pid);
    const socket = this.opts.socketPath ?? this.opts.socketName;
    return { pid, ref: { target: name, pane: paneId, ...(socket ? { socket } : {}) } };
  }

  /** One new-session chain with its own hand-off file (removed when tmux did not take it). */
  private async newSession(spec: TerminalPlan, name: string, pane: string, handoff: string): Promise<string> {
    const { TERM: _term, ...env } = spec.env;
    await writeFile(
      handoff,
      encodeHandoff({
        cwd: spec.cwd,
        eventsPath: spec.eventsPath,
        argv: spec.argv,
        env,
        ...(spec.generation !== undefined ? { generation: spec.generation } : {}),
      }),
      { mode: 0o600, flag: "wx" },
    );
    // The exit tmux reports carries the spawn generation: a late exit of an older process is then ignored.
    const gen = spec.generation === undefined ? "" : ` ${Math.trunc(spec.generation)}`;
    const died = `run-shell -b ${tmuxQuote(`${shQuote(this.opts.hookScript)} ${shQuote(spec.eventsPath)} exit #{pane_dead_status}${gen}`)}`;
    try {
      // One tmux call, so remain-on-exit, the hook and the log pipe are in place before the process can exit.
      return await this.ok([
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        String(spec.cols),
        "-y",
        String(spec.rows),
        "-c",
        spec.dir,
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        "--",
        this.opts.launchScript,
        handoff,
        ";",
        "set-option",
        "-w",
        "-t",
        pane,
        "remain-on-exit",
        "on",
        ";",
        "set-hook",
        "-t",
        pane,
        "pane-died",
        died,
        ";",
        "pipe-pane",
        "-o",
        "-t",
        pane,
        this.logCommand(spec.rawLogPath),
      ]);
    } catch (e) {
      await rm(handoff, { force: true });
      throw e;
    }
  }

  /** The shell command pipe-pane runs (server-made paths only): the bounded writer, or a plain append. */
  private logCommand(rawLogPath: string): string {
    if (!this.opts.captureScript) return `cat >> ${shQuote(rawLogPath)}`;
    return `exec ${shQuote(this.opts.captureScript)} ${shQuote(rawLogPath)} ${Math.trunc(this.opts.outputMaxBytes ?? OUTPUT_LOG_MAX_BYTES)}`;
  }

  /**
   * The hand-off file holds the session's environment (secrets too): it must not outlive the start. The
   * launcher deletes it first thing; if it never does (it died, tmux is wedged), it is removed here.
   */
  private async handoffTaken(handoff: string, pid: number): Promise<void> {
    const until = Date.now() + HANDOFF_TAKEN_MS;
    for (let wait = 2; ; wait = Math.min(50, wait * 2)) {
      if (
        !(await access(handoff).then(
          () => true,
          () => false,
        ))
      )
        return;
      if (Date.now() > until || !isAlive(pid)) break;
      await sleep(wait);
    }
    await rm(handoff, { force: true });
    if (isAlive(pid)) throw new SessionError("PROCESS_ERROR", `the launcher did not start within ${HANDOFF_TAKEN_MS} ms.`);
  }

  async paste(id: string, text: string): Promise<void> {
    const buf = `cs-${id}-${process.pid}-${++this.bufSeq}`;
    await this.ok(
      ["load-buffer", "-b", buf, "-", ";", "paste-buffer", "-p", "-d", "-b", buf, "-t", `=${sessionName(id)}:`],
      text,
    );
  }

  /**
   * One tmux call for any number of pieces: one buffer holding the pieces with a paste end and start between them,
   * pasted bracketed, so the pane gets `ESC[200~ piece ESC[201~ ESC[200~ piece … ESC[201~` — the bytes of one paste-buffer -p
   * per piece. Markers inside a piece are dropped (a validated prompt has none).
   */
  async pasteEach(id: string, pieces: readonly string[]): Promise<void> {
    if (pieces.length === 0) return;
    const clean = pieces.map((p) => p.split(PASTE_START).join("").split(PASTE_END).join(""));
    await this.paste(id, clean.join(PASTE_END + PASTE_START));
  }

  async keys(id: string, keys: readonly Key[]): Promise<void> {
    await this.ok(["send-keys", "-t", `=${sessionName(id)}:`, ...keys]);
  }

  async screen(id: string, opts: { above?: number } = {}): Promise<string> {
    const above = Math.max(0, Math.floor(opts.above ?? 0));
    const r = await this.tmux(["capture-pane", "-p", ...(above ? ["-S", String(-above)] : []), "-t", `=${sessionName(id)}:`]);
    if (r.code !== 0) throw new SessionError("SESSION_DEAD", `the tmux session ${sessionName(id)} is gone.`);
    return r.stdout;
  }

  async list(): Promise<Map<string, Liveness>> {
    const r = await this.tmux(["list-panes", "-a", "-F", "#{session_name}\t#{pane_pid}\t#{pane_dead}\t#{pane_dead_status}"]);
    const m = new Map<string, Liveness>();
    if (r.code !== 0) return m; // no server running: no sessions
    for (const line of r.stdout.split("\n")) {
      const [sess, pid, dead, status] = line.split("\t");
      if (!sess?.startsWith("cs-")) continue;
      const id = sess.slice(3);
      const l: Liveness = { exists: true, alive: dead !== "1", pid: Number(pid) };
      if (dead === "1" && status !== undefined && status !== "") l.exitCode = Number(status);
      m.set(id, l);
    }
    return m;
  }

  /**
   * tmux 3.3 built with libutempter can miss a SIGCHLD (tmux/tmux#311): the pane shows dead with no
   * exit status and the child stays a zombie until another child exits. A SIGCHLD to the tmux server
   * makes it reap and record the status; it is harmless otherwise.
   */
  async nudge(): Promise<void> {
    if (this.serverPid === undefined || !isAlive(this.serverPid)) {
      const r = await this.tmux(["display-message", "-p", "#{pid}"]).catch(() => undefined);
      const pid = Number(r?.stdout.trim());
      if (!r || r.code !== 0 || !Number.isInteger(pid) || pid <= 0) return;
      this.serverPid = pid;
    }
    try {
      process.kill(this.serverPid, "SIGCHLD");
    } catch {
      this.serverPid = undefined;
    }
  }

  /** Asked a few times over ~2 s (the status shows in list-panes a moment after pane-died), then given up. */
  async settleExit(id: string): Promise<number | undefined> {
    for (const delay of [50, 200, 500, 1500]) {
      await sleep(delay);
      await this.nudge();
      const l = (await this.list().catch(() => undefined))?.get(id);
      if (!l || l.alive) return undefined;
      if (l.exitCode !== undefined) return l.exitCode;
    }
    return undefined;
  }

  async kill(id: string, opts: { graceMs: number; pid?: number }): Promise<KillResult> {
    let pid = opts.pid;
    const before = (await this.list()).get(id);
    if (before?.pid) pid = before.pid;
    return killTree(id, pid, opts.graceMs, async () => {
      let forced = false;
      if (pid && before?.alive !== false) {
        // No grace (kill_session {force}): straight to SIGKILL below.
        if (opts.graceMs > 0) signalGroup(pid, "SIGTERM");
        // A process that exited stays a zombie until tmux reaps it: waiting on it means nudging tmux.
        const gone = async (until: number) => {
          let n = 0;
          while (isAlive(pid) && Date.now() < until) {
            await sleep(25);
            if (++n % 4 === 0) await this.nudge();
          }
          return !isAlive(pid);
        };
        if (!(await gone(Date.now() + opts.graceMs))) {
          forced = true;
          signalGroup(pid, "SIGKILL");
          await gone(Date.now() + 2000);
        }
      }
      // Give tmux a moment to notice the exit so the pane-died hook runs and the status is read.
      let after: Liveness | undefined;
      for (let i = 0; i < 40; i++) {
        after = (await this.list()).get(id);
        if (!after || !after.alive) break;
        await sleep(25);
      }
      return after?.exitCode !== undefined ? { forced, exitCode: after.exitCode } : { forced };
    });
  }

  async remove(id: string): Promise<void> {
    await this.tmux(["kill-session", "-t", `=${sessionName(id)}`]);
  }
}

/** Quotes a string as one tmux command argument (tmux's own parser, inside set-hook). */
function tmuxQuote(s: string): string {
  return `"${s.replace(/(["\\$])/g, "\\$1")}"`;
}

export { ExecError };

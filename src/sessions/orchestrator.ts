/**
 * The orchestrator: start, resume, send, wait, stream, kill, list. It owns no terminal code (that
 * is backends/) and no file format (store/, claude/); it ties hooks, backends and the store together.
 */
import { randomUUID } from "node:crypto";
import { watch } from "node:fs";
import { mkdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { stripVTControlCharacters } from "node:util";
import { customAlphabet } from "nanoid";
import writeFileAtomic from "write-file-atomic";
import type { Backend, BackendKind, Key } from "../backends/backend.js";
import { findClaude, findOnPath } from "../claude/discover.js";
import { hooksSettings } from "../claude/hooks.js";
import { buildClaudeArgs, childEnv, ENV_NAME, wrapWithDoppler, type ClaudeOptions, type LaunchMode } from "../claude/launch.js";
import type { ScriptPaths } from "../claude/scripts.js";
import { readTranscript, transcriptPath, type TranscriptItem } from "../claude/transcript.js";
import type { Config } from "../config.js";
import { newRecord, type SessionRecord } from "../store/schema.js";
import type { Store } from "../store/store.js";
import { readFrom, readTail } from "../util/files.js";
import { isAlive } from "../util/process.js";
import { assertOwnedScript, createOwnedFile, isSameFile } from "../util/owned.js";
import { pastePieces, preparePrompt } from "./prompt.js";
import type { Logger } from "../util/log.js";
import { appendEvent } from "./eventlog.js";
import { SessionError } from "../core/errors.js";
import { LiveSession } from "./live.js";
import type { Folded, LogEvent, PendingPermission } from "./reducer.js";
import { BLOCKING_HELP, detectBlockingScreen, inputText, lastLines, menuMoves, permissionDigit, showsBusy, showsInterrupted, showsStoppedTurn } from "./screens.js";
import { acceptsPrompt, isLive, statusGroup, type Status } from "../core/status.js";

export const newSessionId = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 10);

export interface CallContext {
  signal?: AbortSignal;
  /** Reports progress to the client (MCP progress notifications reset its request timeout). */
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
}

export interface StartInput extends ClaudeOptions {
  cwd: string;
  prompt?: string;
  max_turns?: number;
  team_name?: string;
  teammate_name?: string;
  env?: Record<string, string>;
  log_file?: string;
  backend?: BackendKind;
  doppler?: { project?: string; config?: string };
  trust_workspace?: boolean;
}

export interface ResumeInput {
  session_id?: string;
  claude_session_id?: string;
  cwd?: string;
  message?: string;
  fork?: boolean;
  backend?: BackendKind;
  env?: Record<string, string>;
  doppler?: { project?: string; config?: string };
  trust_workspace?: boolean;
}

export interface SessionSummary {
  session_id: string;
  claude_session_id: string;
  status: Status;
  backend: BackendKind;
  survives_restart: boolean;
  pid?: number;
  cwd: string;
  created_at: string;
  last_active?: string;
  team_name?: string;
  teammate_name?: string;
  model?: string;
  turn_count: number;
  pending_permission?: { tool_name: string; tool_input: unknown };
  attach_command?: string;
}

interface Internals {
  dir: string;
  eventsPath: string;
  rawLogPath: string;
  settingsPath: string;
}

const PROMPT_CONFIRM_MS = 2500;
/** How long start-up waits, after SessionStart, for the input box to be drawn (2.1.330: ~200 ms later). */
const INPUT_DRAWN_MS = 3000;
const PROMPT_ATTEMPTS = 3;
/** Status writes wait this long to take in the other events of a burst (tool answers use the live fold). */
const PERSIST_GATHER_MS = 20;
const PROGRESS_EVERY_MS = 5000;
/** While a wait sees no events for this long, the screen is read once (Esc interrupts fire no hook). */
const INTERRUPT_PROBE_MS = 5000;

export class Orchestrator {
  private readonly live = new Map<string, LiveSession>();
  private readonly dirty = new Set<string>();
  private flushing: Promise<void> | undefined;
  private readonly deadlines = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly cfg: Config,
    private readonly store: Store,
    private readonly backends: Partial<Record<BackendKind, Backend>>,
    private readonly scripts: ScriptPaths,
    private readonly log: Logger,
  ) {}

  // ---------------------------------------------------------------- helpers

  private paths(id: string): Internals {
    const dir = join(this.cfg.stateDir, id);
    return { dir, eventsPath: join(dir, "events.jsonl"), rawLogPath: join(dir, "output.log"), settingsPath: join(dir, "settings.json") };
  }

  private backend(kind: BackendKind): Backend {
    const b = this.backends[kind];
    if (!b) {
      if (kind === "tmux") throw new SessionError("TMUX_NOT_FOUND", "the tmux backend is not available on this server.");
      throw new SessionError("INVALID_ARGUMENT", `the ${kind} backend is not available on this server.`, {
        suggestion: "Use backend: \"tmux\", or install the optional dependency node-pty.",
      });
    }
    return b;
  }

  private defaultBackend(): BackendKind {
    if (this.cfg.defaultBackend) return this.cfg.defaultBackend;
    return this.backends.tmux ? "tmux" : "pty";
  }

  private async record(id: string): Promise<SessionRecord> {
    const r = await this.store.get(id);
    if (!r) throw new SessionError("SESSION_NOT_FOUND", `no session with id ${JSON.stringify(id)}.`);
    return r;
  }

  /** The live view of a session, replaying its events log the first time this process looks at it. */
  private async follow(id: string): Promise<LiveSession> {
    let s = this.live.get(id);
    if (s) return s;
    const p = this.paths(id);
    s = new LiveSession(id, p.eventsPath, (ls, evs) => this.onEvents(ls, evs), (e) => this.log.warn(`events of ${id}: ${String(e)}`));
    this.live.set(id, s);
    await s.start();
    return s;
  }

  private onEvents(s: LiveSession, events: LogEvent[]): void {
    for (const e of events) this.log.debug(`${s.id} ${e.hook_event_name}`);
    this.persist(s.id);
    if (s.fold.status === "dead") this.clearDeadline(s.id);
    if (events.some((e) => e.hook_event_name === "cs:exit" && typeof e.exit_code !== "number")) void this.fetchExitCode(s);
  }

  /**
   * tmux 3.3 can run pane-died before it knows the exit status (#{pane_dead_status} empty); the
   * status shows in list-panes a moment later. Asked a few times, then given up.
   */
  private async fetchExitCode(s: LiveSession): Promise<void> {
    const tmux = this.backends.tmux;
    if (!tmux) return;
    for (const delay of [50, 200, 500, 1500]) {
      await sleep(delay);
      await tmux.nudge?.();
      if (this.closed || typeof s.fold.exit_code === "number") return;
      const l = (await tmux.list().catch(() => undefined))?.get(s.id);
      if (!l || l.alive) return;
      if (l.exitCode !== undefined) {
        await this.emit(s.id, { hook_event_name: "cs:exit", exit_code: l.exitCode }).catch(() => {});
        return;
      }
    }
  }

  /**
   * Writes folded statuses into state.json. Changes of every session that arrive while a write is under
   * way go into the next one: one locked write per burst, whatever the number of sessions.
   */
  private persist(id: string): void {
    this.dirty.add(id);
    this.flushing ??= (async () => {
      try {
        // A turn brings several events in quick succession: gather them into one write.
        await sleep(PERSIST_GATHER_MS);
        while (this.dirty.size) {
          const ids = [...this.dirty];
          this.dirty.clear();
          try {
            await this.store.update((st) => {
              for (const i of ids) {
                const s = this.live.get(i);
                const r = st.sessions[i];
                if (s && r) applyFold(r, s.fold);
              }
            });
          } catch (e) {
            this.log.warn(`saving session statuses failed: ${String(e)}`);
          }
        }
      } finally {
        this.flushing = undefined;
      }
    })();
  }

  /** Resolves once the status written for every session includes everything folded so far. */
  private async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async emit(id: string, ev: LogEvent): Promise<void> {
    await appendEvent(this.scripts.hook, this.paths(id).eventsPath, ev);
    await this.live.get(id)?.refresh();
  }

  private clearDeadline(id: string): void {
    const t = this.deadlines.get(id);
    if (t) clearTimeout(t);
    this.deadlines.delete(id);
  }

  /** MAX_SESSION_DURATION: a session older than that is ended (gracefully) and left resumable. */
  private armDeadline(r: SessionRecord): void {
    this.clearDeadline(r.session_id);
    const left = Date.parse(r.created_at) + this.cfg.maxSessionDurationMs - Date.now();
    if (left > 2 ** 31 - 1) return;
    const t = setTimeout(() => {
      this.log.info(`${r.session_id} reached MAX_SESSION_DURATION; ending it`);
      void this.kill({ session_id: r.session_id, reason: "max_duration" }).catch((e) => this.log.warn(String(e)));
    }, Math.max(0, left));
    t.unref();
    this.deadlines.set(r.session_id, t);
  }

  // ---------------------------------------------------------------- adoption

  /** Adopts live sessions left by an earlier server and marks the vanished ones dead. */
  async adopt(): Promise<{ adopted: string[]; dead: string[] }> {
    const state = await this.store.read();
    const adopted: string[] = [];
    const dead: string[] = [];
    const tmuxLive = this.backends.tmux ? await this.backends.tmux.list() : new Map();
    for (const r of Object.values(state.sessions)) {
      if (!isLive(r.status)) continue;
      if (r.backend === "tmux") {
        const l = tmuxLive.get(r.session_id);
        if (l?.exists) {
          const s = await this.follow(r.session_id);
          if (!l.alive && isLive(s.fold.status)) await this.emit(r.session_id, { hook_event_name: "cs:exit", ...(l.exitCode !== undefined ? { exit_code: l.exitCode } : {}) });
          adopted.push(r.session_id);
          this.armDeadline(r);
          continue;
        }
      } else if (r.owner_pid && r.owner_pid !== process.pid && isAlive(r.owner_pid)) {
        continue; // another live server owns this pty session
      }
      await this.markVanished(r);
      dead.push(r.session_id);
    }
    await this.flushed();
    if (adopted.length || dead.length) this.log.info(`adopted ${adopted.length} live session(s), marked ${dead.length} dead`);
    return { adopted, dead };
  }

  private async markVanished(r: SessionRecord): Promise<void> {
    const s = await this.follow(r.session_id);
    await this.emit(r.session_id, { hook_event_name: "cs:exit" }).catch(() => {});
    await this.flushed();
    await this.store.patch(r.session_id, (rec) => {
      applyFold(rec, s.fold);
      rec.status = "dead";
      delete rec.pid;
    });
  }

  // ---------------------------------------------------------------- start / resume

  async start(input: StartInput, ctx: CallContext = {}): Promise<Record<string, unknown>> {
    const cwd = await this.checkCwd(input.cwd);
    this.checkPermissionMode(input.permission_mode);
    const kind = input.backend ?? this.defaultBackend();
    const backend = this.backend(kind);
    const claude = this.claudeBinary();
    const doppler = this.dopplerFor(input.doppler);
    const env = this.checkEnv(input.env);
    const prompt = input.prompt !== undefined ? this.prompt(input.prompt, "prompt") : undefined;
    for (const d of input.add_dirs ?? []) await this.checkCwd(d, "add_dirs");
    // Last of the checks: it creates the file (nothing else is left to refuse the call afterwards).
    await assertOwnedScript(this.scripts.hook);
    const logFile = input.log_file !== undefined ? await createOwnedFile(input.log_file) : undefined;

    const id = newSessionId();
    const claudeSessionId = randomUUID();
    const p = this.paths(id);
    const opts: ClaudeOptions = pickClaudeOptions(input);
    const claudeArgv = [claude, ...buildClaudeArgs({ kind: "new", claudeSessionId }, p.settingsPath, opts)];
    const argv = doppler ? wrapWithDoppler(claudeArgv, doppler) : claudeArgv;
    const now = new Date().toISOString();
    const rec = newRecord({
      session_id: id,
      claude_session_id: claudeSessionId,
      backend: kind,
      status: "starting",
      created_at: now,
      cwd,
      command: argv[0]!,
      args: argv.slice(1),
      env_names: Object.keys(env).sort(),
      options: { ...opts, ...(input.trust_workspace ? { trust_workspace: true } : {}) },
    });
    if (doppler?.project) rec.doppler_project = doppler.project;
    if (doppler?.config) rec.doppler_config = doppler.config;
    if (input.team_name) rec.team_name = input.team_name;
    if (input.teammate_name) rec.teammate_name = input.teammate_name;
    if (input.model) rec.model = input.model;
    if (input.permission_mode) rec.permission_mode = input.permission_mode;
    if (input.max_turns !== undefined) rec.max_turns = input.max_turns;
    if (logFile) {
      rec.log_file = logFile.path;
      rec.log_file_id = { dev: logFile.dev, ino: logFile.ino };
    }

    // Counting and inserting under one lock: two servers cannot both take the last place.
    try {
      await this.store.update((s) => {
        this.assertRoom(s.sessions);
        s.sessions[id] = rec;
      });
    } catch (e) {
      if (logFile) await rm(logFile.path, { force: true });
      throw e;
    }
    await this.launch(rec, backend, argv, { kind: "new", claudeSessionId }, sessionEnv(rec, env), Boolean(input.trust_workspace), ctx);
    if (prompt !== undefined) await this.deliver(id, prompt, ctx);
    return this.startResult(id);
  }

  async resume(input: ResumeInput, ctx: CallContext = {}): Promise<Record<string, unknown>> {
    const message = input.message !== undefined ? this.prompt(input.message, "message") : undefined;
    const env = this.checkEnv(input.env);
    let rec: SessionRecord;
    if (input.session_id) {
      rec = await this.record(input.session_id);
      if (isLive(rec.status)) {
        const l = rec.backend === "tmux" ? (await this.backend("tmux").list()).get(rec.session_id) : undefined;
        if (rec.backend === "pty" || l?.alive) {
          throw new SessionError("INVALID_ARGUMENT", `session ${rec.session_id} is still running (${rec.status}); only an ended session can be resumed.`, {
            suggestion: "Use send_message to talk to it, or kill_session first.",
          });
        }
      }
    } else if (input.claude_session_id) {
      if (!input.cwd) throw new SessionError("INVALID_ARGUMENT", "adopting a conversation needs its cwd as well as claude_session_id.");
      rec = await this.adoptConversation(input.claude_session_id, await this.checkCwd(input.cwd), input.backend);
    } else {
      throw new SessionError("INVALID_ARGUMENT", "pass session_id (a session of this server) or claude_session_id with cwd (any Claude Code conversation).");
    }
    const cwd = input.cwd ? await this.checkCwd(input.cwd) : rec.cwd;
    const kind = input.backend ?? rec.backend;
    const backend = this.backend(kind);
    const claude = this.claudeBinary();
    const doppler = this.dopplerFor(input.doppler ?? storedDoppler(rec));
    const opts = pickClaudeOptions(rec.options as ClaudeOptions);
    this.checkPermissionMode(opts.permission_mode);
    const newId = input.fork ? randomUUID() : undefined;
    const mode: LaunchMode = { kind: "resume", resumeId: rec.claude_session_id, ...(newId ? { fork: { newId } } : {}) };
    const p = this.paths(rec.session_id);
    const claudeArgv = [claude, ...buildClaudeArgs(mode, p.settingsPath, opts)];
    const argv = doppler ? wrapWithDoppler(claudeArgv, doppler) : claudeArgv;
    if (rec.log_file && rec.log_file_id && !(await isSameFile(rec.log_file, rec.log_file_id))) {
      throw new SessionError("INVALID_ARGUMENT", `the session's log_file ${JSON.stringify(rec.log_file)} is no longer the file this server created for it; nothing was started.`, {
        suggestion: "Restore the file, or start a new session with a new log_file.",
      });
    }
    await assertOwnedScript(this.scripts.hook);
    const previous = { created_at: rec.created_at, ...(rec.last_active ? { last_active: rec.last_active } : {}), claude_session_id: rec.claude_session_id };

    // Clear what is left of the old terminal before reusing its name.
    await this.backends[rec.backend]?.remove(rec.session_id).catch(() => {});
    const updated = await this.store.update((s) => {
      const r = s.sessions[rec.session_id];
      if (!r) throw new SessionError("SESSION_NOT_FOUND", `session ${rec.session_id} disappeared.`);
      this.assertRoom(s.sessions, r.session_id);
      r.status = "starting";
      r.cwd = cwd;
      r.backend = kind;
      r.command = argv[0]!;
      r.args = argv.slice(1);
      r.env_names = [...new Set([...r.env_names, ...Object.keys(env)])].sort();
      if (newId) r.claude_session_id = newId;
      if (doppler?.project) r.doppler_project = doppler.project;
      if (doppler?.config) r.doppler_config = doppler.config;
      delete r.killed_at;
      delete r.exit_code;
      delete r.pending_permission;
      return structuredClone(r);
    });
    await this.launch(updated, backend, argv, mode, sessionEnv(rec, env), Boolean(input.trust_workspace ?? rec.options.trust_workspace), ctx);
    if (message !== undefined) await this.deliver(rec.session_id, message, ctx);
    return { ...(await this.startResult(rec.session_id)), resumed_at: new Date().toISOString(), forked: Boolean(newId), previous_state: previous };
  }

  private async adoptConversation(claudeSessionId: string, cwd: string, backend?: BackendKind): Promise<SessionRecord> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(claudeSessionId)) {
      throw new SessionError("INVALID_ARGUMENT", "claude_session_id must be the UUID of a Claude Code conversation.");
    }
    const existing = Object.values((await this.store.read()).sessions).find((r) => r.claude_session_id === claudeSessionId);
    if (existing) return structuredClone(existing);
    const id = newSessionId();
    const rec = newRecord({ session_id: id, claude_session_id: claudeSessionId, backend: backend ?? this.defaultBackend(), status: "dead", cwd });
    await this.store.update((s) => {
      s.sessions[id] = rec;
    });
    return rec;
  }

  /** Spawns the terminal and waits for SessionStart; on failure leaves the record in `error` with the reason. */
  private async launch(rec: SessionRecord, backend: Backend, argv: string[], mode: LaunchMode, extraEnv: Record<string, string>, trust: boolean, ctx: CallContext): Promise<void> {
    const id = rec.session_id;
    const p = this.paths(id);
    await mkdir(p.dir, { recursive: true, mode: 0o700 });
    await writeFile(p.eventsPath, "", { flag: "a", mode: 0o600 });
    await writeFileAtomic(p.settingsPath, JSON.stringify(hooksSettings(p.eventsPath), null, 2) + "\n", { mode: 0o600 });
    const claudeId = mode.kind === "new" ? mode.claudeSessionId : (mode.fork?.newId ?? mode.resumeId);
    const s = await this.follow(id);
    await this.emit(id, { hook_event_name: "cs:spawn", claude_session_id: claudeId });

    await this.linkRawLog(rec);
    const env = childEnv(process.env, extraEnv);
    const spec = { id, dir: p.dir, argv, cwd: rec.cwd, env, cols: this.cfg.cols, rows: this.cfg.rows, rawLogPath: p.rawLogPath, eventsPath: p.eventsPath };
    let spawned;
    try {
      spawned = await backend.spawn(spec);
    } catch (e) {
      await this.failStart(id, e instanceof SessionError ? e.message : String(e));
      throw e instanceof SessionError ? e : new SessionError("PROCESS_ERROR", `could not start the terminal: ${String(e)}`);
    }
    await this.store.patch(id, (r) => {
      r.pid = spawned.pid;
      if (spawned.paneId) r.tmux_pane_id = spawned.paneId;
      if (backend.kind === "tmux") {
        r.tmux_session = spawned.target;
        const sock = this.cfg.tmuxSocketPath ?? this.cfg.tmuxSocketName;
        if (sock) r.tmux_socket = sock;
      } else r.owner_pid = process.pid;
    });

    const t0 = Date.now();
    let trustedAt = 0;
    let lastScreen = "";
    let blocked: ReturnType<typeof detectBlockingScreen>;
    // Hooks decide; the screen is read only while SessionStart is late, to recognise a first-run screen.
    const folded = await s
      .waitFor((f) => f.status !== "starting" || blocked !== undefined, {
        timeoutMs: this.cfg.startTimeoutMs,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        tickMs: 500,
        tick: async (ms) => {
          if (ms % 2000 < 500) ctx.progress?.({ progress: ms, total: this.cfg.startTimeoutMs, message: "waiting for Claude Code to start" });
          if (ms < 1500) return;
          lastScreen = await backend.screen(id).catch(() => lastScreen);
          const seen = detectBlockingScreen(lastScreen);
          if (seen === "trust" && trust) {
            if (Date.now() - trustedAt > 2500) {
              trustedAt = Date.now();
              await sleep(250); // the CLI ignores keys in the first moments of a dialog
              // 2.1.330 lists "No, exit" first (2.1.197: "1. Yes, I trust this folder"): move onto Yes, then Enter.
              const moves = menuMoves(lastScreen, /Yes, I trust this folder/i) ?? 0;
              for (let i = 0; i < Math.abs(moves); i++) await backend.keys(id, [moves > 0 ? "Down" : "Up"]);
              if (moves) await sleep(100);
              await backend.keys(id, ["Enter"]);
            }
            return;
          }
          blocked = seen;
        },
      })
      .catch(async (e) => {
        await this.abortStart(id, backend, "cancelled");
        throw e;
      });
    if (folded && isLive(folded.status) && folded.status !== "starting") {
      await this.inputDrawn(id, backend);
      await this.flushed();
      await this.store.patch(id, (r) => {
        r.started_at = new Date().toISOString();
        r.last_active = r.started_at;
      });
      this.armDeadline((await this.store.get(id))!);
      this.log.info(`${id} ready in ${Date.now() - t0} ms (${backend.kind}, claude ${claudeId})`);
      return;
    }
    // Not ready: say why, with what the terminal shows.
    const f = s.fold;
    let err: SessionError;
    if (f.status === "dead") {
      // What the process printed before it died is in the raw log (tmux may already show "Pane is dead").
      const printed = lastLines(cleanLog((await readTail(p.rawLogPath, 16 * 1024)).text));
      const isDoppler = argv[1] === "run" && /doppler/i.test(argv[0] ?? "");
      if (isDoppler && /doppler/i.test(printed)) err = new SessionError("DOPPLER_ERROR", `doppler failed (exit ${f.exit_code ?? "?"}):\n${printed}`);
      else err = new SessionError("PROCESS_ERROR", `Claude Code exited during start-up (exit ${f.exit_code ?? "?"}). It printed:\n${printed || "(nothing)"}`);
    } else {
      lastScreen = await backend.screen(id).catch(() => lastScreen);
      const shown = lastLines(stripVTControlCharacters(lastScreen));
      const screen = blocked ?? detectBlockingScreen(lastScreen);
      if (screen) {
        err = new SessionError("STARTUP_BLOCKED", `Claude Code is waiting at its ${screen.replace("_", " ")} screen instead of its prompt:\n${shown}`, {
          suggestion: BLOCKING_HELP[screen],
          details: { screen },
        });
      } else {
        err = new SessionError("TIMEOUT", `Claude Code did not report SessionStart within ${this.cfg.startTimeoutMs} ms. The terminal shows:\n${shown || "(nothing)"}`);
      }
    }
    await this.abortStart(id, backend, err.message);
    throw err;
  }

  /**
   * SessionStart can come before the input box is drawn (2.1.330: ~200 ms before), and a bracketed paste
   * that arrives then loses its brackets (each newline submits). Waits, bounded, until the box shows.
   */
  private async inputDrawn(id: string, backend: Backend): Promise<void> {
    const end = Date.now() + INPUT_DRAWN_MS;
    for (;;) {
      const screen = await backend.screen(id).catch(() => undefined);
      if (screen === undefined || inputText(screen) !== undefined) break;
      if (Date.now() > end) {
        this.log.warn(`${id}: no input box on screen ${INPUT_DRAWN_MS} ms after SessionStart; going on`);
        return;
      }
      await sleep(25);
    }
    await sleep(50); // the frame is drawn just before the input handler is attached
  }

  /**
   * The terminal's raw output goes to <dir>/output.log, a path the server made. A session with a log_file
   * gets output.log as a link to that file, which the server created for it; a file found there that is not
   * that one (replaced since) is not written or read.
   */
  private async linkRawLog(r: SessionRecord): Promise<void> {
    const raw = this.paths(r.session_id).rawLogPath;
    if (!r.log_file || !r.log_file_id) return;
    if (!(await isSameFile(r.log_file, r.log_file_id))) {
      throw new SessionError("INVALID_ARGUMENT", `the session's log_file ${JSON.stringify(r.log_file)} is no longer the file this server created for it; nothing was started.`, {
        suggestion: "Start a new session with a new log_file, or restore the file.",
      });
    }
    await rm(raw, { force: true });
    await symlink(r.log_file, raw);
  }

  /** The raw output file of a session, or undefined when its log_file was replaced by something else. */
  private async rawLog(r: SessionRecord): Promise<string | undefined> {
    const raw = this.paths(r.session_id).rawLogPath;
    if (r.log_file && r.log_file_id && !(await isSameFile(r.log_file, r.log_file_id))) return undefined;
    return raw;
  }

  private async abortStart(id: string, backend: Backend, why: string): Promise<void> {
    await backend.kill(id, { graceMs: 1000 }).catch(() => {});
    await backend.remove(id).catch(() => {});
    await this.failStart(id, why);
  }

  private async failStart(id: string, why: string): Promise<void> {
    await this.emit(id, { hook_event_name: "cs:start_failed", message: why.slice(0, 2000) }).catch(() => {});
    await this.flushed();
    await this.store.patch(id, (r) => {
      r.status = "error";
      r.error_log = [...r.error_log, `${new Date().toISOString()} start failed: ${why.slice(0, 2000)}`].slice(-20);
      delete r.pid;
    });
  }

  private async startResult(id: string): Promise<Record<string, unknown>> {
    await this.flushed();
    const r = await this.record(id);
    const b = this.backends[r.backend];
    const out: Record<string, unknown> = {
      session_id: r.session_id,
      claude_session_id: r.claude_session_id,
      status: this.live.get(id)?.fold.status ?? r.status,
      backend: r.backend,
      pid: r.pid,
      tmux_target: r.backend === "tmux" ? `cs-${r.session_id}` : undefined,
      attach_command: b?.attachCommand?.(r.session_id),
      started_at: r.started_at,
    };
    for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
    return out;
  }

  // ---------------------------------------------------------------- send / wait

  /** Pastes the text (bracketed) and presses Enter separately, without waiting for Claude. */
  private async type(id: string, message: string): Promise<string> {
    const r = await this.record(id);
    const backend = this.backend(r.backend);
    const sent_at = new Date().toISOString();
    await this.pasteOnly(backend, id, message);
    await backend.keys(id, ["Enter"]);
    await this.countSent(id, message);
    return sent_at;
  }

  private async pasteOnly(backend: Backend, id: string, message: string): Promise<void> {
    const text = message;
    for (const piece of pastePieces(text)) await backend.paste(id, piece);
    // The paste and the Enter must be separate keystrokes; a long paste needs a moment to land.
    await sleep(Math.min(500, 40 + Math.floor(text.length / 1000) * 5));
  }

  private async countSent(id: string, message: string): Promise<void> {
    await this.store.patch(id, (rec) => {
      rec.last_message = message;
      rec.messages_sent += 1;
      rec.total_chars_sent += message.length;
      rec.last_active = new Date().toISOString();
    });
  }

  /** Pastes a prompt and confirms Claude accepted it (UserPromptSubmit), retrying Enter a bounded number of times. */
  private async deliver(id: string, message: string, ctx: CallContext): Promise<{ sent_at: string; attempts: number }> {
    const r = await this.record(id);
    const s = await this.follow(id);
    const backend = this.backend(r.backend);
    const before = s.fold.prompts_submitted;
    const sent_at = new Date().toISOString();
    await this.pasteOnly(backend, id, message);
    let attempts = 0;
    while (attempts < PROMPT_ATTEMPTS) {
      attempts += 1;
      await backend.keys(id, ["Enter"]);
      const f = await s.waitFor((x) => x.prompts_submitted > before || x.status === "dead", {
        timeoutMs: PROMPT_CONFIRM_MS * attempts,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      if (f?.status === "dead") throw new SessionError("SESSION_DEAD", `session ${id} ended while the prompt was being delivered.`);
      if (f) {
        await this.countSent(id, message);
        return { sent_at, attempts };
      }
      // A message that starts with "/" is a command to Claude Code; one it does not know never becomes a prompt.
      const unknown = message.startsWith("/") ? /^.*Unknown (?:command|skill): \/.*$/m.exec(await backend.screen(id).catch(() => "")) : null;
      if (unknown) {
        throw new SessionError("INVALID_ARGUMENT", `Claude Code took the message as a slash command and did not send it: ${unknown[0].replace(/^[\s●]+/, "")}`, {
          suggestion: "Claude Code reads a message that starts with \"/\" as a command. Put other text before the slash.",
        });
      }
      this.log.warn(`${id}: no UserPromptSubmit after Enter #${attempts}; trying again`);
    }
    const screen = await backend.screen(id).catch(() => "");
    throw new SessionError("TIMEOUT", `Claude Code did not accept the prompt after ${PROMPT_ATTEMPTS} Enter presses. The terminal shows:\n${lastLines(stripVTControlCharacters(screen))}`);
  }

  /**
   * Bash mode ("!" + command, only when the operator allows it) fires no hook: the command counts as taken
   * once the input box no longer holds it. Its output is in the transcript (stream_output).
   */
  private async deliverShellCommand(id: string, text: string): Promise<string> {
    const r = await this.record(id);
    const backend = this.backend(r.backend);
    const sent_at = new Date().toISOString();
    const head = text.slice(1, 40).trim();
    await this.pasteOnly(backend, id, text);
    for (let attempt = 1; attempt <= PROMPT_ATTEMPTS; attempt++) {
      await backend.keys(id, ["Enter"]);
      for (const end = Date.now() + 1000 * attempt; Date.now() < end; await sleep(25)) {
        const box = inputText(await backend.screen(id).catch(() => ""));
        if (box !== undefined && !box.includes(head)) {
          await this.countSent(id, text);
          return sent_at;
        }
      }
    }
    throw new SessionError("TIMEOUT", `Claude Code did not take the shell command after ${PROMPT_ATTEMPTS} Enter presses.`);
  }

  async send(
    input: { session_id: string; message: string; wait_for_response?: boolean; timeout_ms?: number; queue?: boolean; bash_mode?: boolean },
    ctx: CallContext = {},
  ): Promise<Record<string, unknown>> {
    const text = this.prompt(input.message, "message", input.bash_mode);
    const r = await this.record(input.session_id);
    const s = await this.follow(input.session_id);
    const status = s.fold.status;
    this.checkUsable(r, status);
    if (!acceptsPrompt(status) && !input.queue) {
      throw new SessionError("SESSION_BUSY", `session ${r.session_id} is ${status}.`, {
        ...(status === "waiting_for_permission" ? { suggestion: "Answer the pending permission prompt with respond_permission first." } : {}),
      });
    }
    if (r.max_turns !== undefined && s.fold.prompts_submitted >= r.max_turns) {
      throw new SessionError("LIMIT_REACHED", `session ${r.session_id} has used its ${r.max_turns} turn(s) (max_turns).`, {
        suggestion: "Start a new session, or resume this one with a fresh process if more turns are wanted.",
      });
    }
    const run = async () => {
      const out: Record<string, unknown> = { session_id: r.session_id, message_sent: true };
      if (input.bash_mode) {
        out.sent_at = await this.deliverShellCommand(r.session_id, text);
        out.bash_mode = true;
        out.final_state = s.fold.status;
        return out;
      }
      const queued = !acceptsPrompt(s.fold.status);
      const promptsBefore = s.fold.prompts_submitted;
      const t0 = Date.now();
      if (queued) {
        // Claude queues a prompt typed during a turn; its UserPromptSubmit comes when it runs.
        out.sent_at = await this.type(r.session_id, text);
        out.queued = true;
      } else {
        out.sent_at = (await this.deliver(r.session_id, text, ctx)).sent_at;
      }
      if (input.wait_for_response === false) {
        out.final_state = s.fold.status;
        return out;
      }
      const timeoutMs = input.timeout_ms ?? 30_000;
      // Our prompt is number promptsBefore+1; its turn has ended once that many turns have.
      const w = await this.waitTurn(s, r, promptsBefore + 1, timeoutMs, ctx);
      Object.assign(out, w, { waited_ms: Date.now() - t0 });
      if (w.completed) {
        out.response = w.last_response;
        out.responded_at = new Date().toISOString();
      }
      delete out.last_response;
      return out;
    };
    const p = s.sendChain.then(run, run);
    s.sendChain = p.catch(() => {});
    return p;
  }

  /** Waits until `turn_count` reaches `target`, a permission prompt opens, or the process ends. */
  private async waitTurn(s: LiveSession, r: SessionRecord, target: number, timeoutMs: number, ctx: CallContext) {
    const t0 = Date.now();
    let lastEventAt = Date.now();
    const unsub = s.subscribe(() => (lastEventAt = Date.now()));
    try {
      const f = await s.waitFor((x) => x.turn_count >= target || x.status === "waiting_for_permission" || !isLive(x.status), {
        timeoutMs,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        tickMs: 1000,
        tick: async (ms) => {
          if (ms < 1500 || ms % PROGRESS_EVERY_MS < 1000) ctx.progress?.({ progress: ms, total: timeoutMs, message: `session ${s.id} is ${s.fold.status}` });
          if (Date.now() - lastEventAt >= INTERRUPT_PROBE_MS && s.fold.status === "busy") {
            lastEventAt = Date.now();
            await this.probeInterrupted(s, r);
          }
        },
      });
      return this.turnResult(s, f, Date.now() - t0);
    } finally {
      unsub();
    }
  }

  /**
   * A wait that saw no event for a while looks at the screen once: Esc (pressed by a person in an attached
   * pane) fires no hook. It shows "Interrupted", or (Esc before any reply came, 2.1.197 and 2.1.330) no busy
   * indicator and the prompt put back into the input box, which is then cleared (C-c clears a non-empty input)
   * so the next paste does not join it.
   */
  private async probeInterrupted(s: LiveSession, r: SessionRecord): Promise<boolean> {
    const b = this.backends[r.backend];
    if (!b) return false;
    const screen = await b.screen(s.id).catch(() => "");
    if (!screen) return false;
    const restored = inputText(screen);
    if (showsInterrupted(screen) || (restored && showsStoppedTurn(screen))) {
      if (restored && !showsInterrupted(screen)) await b.keys(s.id, ["C-c"]);
      await this.emit(s.id, { hook_event_name: "cs:interrupted" });
      return true;
    }
    return false;
  }

  private turnResult(s: LiveSession, f: Folded | undefined, waited: number) {
    const cur = f ?? s.fold;
    const timedOut = f === undefined;
    let final: string = cur.status;
    if (!timedOut && cur.status === "idle" && cur.last_turn === "failed") final = "error";
    const out: {
      completed: boolean;
      timed_out: boolean;
      waited_ms: number;
      final_state: string;
      last_response?: string;
      error?: string;
      pending_permission?: { tool_name: string; tool_input: unknown };
      turn_outcome?: string;
      background_tasks?: number;
    } = {
      completed: !timedOut && (cur.status === "idle" || cur.status === "ready"),
      timed_out: timedOut,
      waited_ms: waited,
      final_state: final,
    };
    if (cur.last_response !== undefined) out.last_response = cur.last_response;
    if (cur.last_turn) out.turn_outcome = cur.last_turn;
    if (final === "error" && cur.last_error) out.error = cur.last_error;
    if (cur.pending_permission) out.pending_permission = publicPending(cur.pending_permission);
    if (cur.background_tasks) out.background_tasks = cur.background_tasks;
    return out;
  }

  async wait(input: { session_id: string; timeout_ms?: number }, ctx: CallContext = {}): Promise<Record<string, unknown>> {
    const r = await this.record(input.session_id);
    const s = await this.follow(input.session_id);
    // The turn that is running now (or the last one, if none is) is the one waited for.
    const target = s.fold.prompts_submitted;
    const out = await this.waitTurn(s, r, target, input.timeout_ms ?? 300_000, ctx);
    return { session_id: r.session_id, ...out };
  }

  // ---------------------------------------------------------------- permission / interrupt

  async respondPermission(input: { session_id: string; decision: "allow" | "allow_always" | "deny"; timeout_ms?: number }, ctx: CallContext = {}): Promise<Record<string, unknown>> {
    const r = await this.record(input.session_id);
    const s = await this.follow(input.session_id);
    const pending = s.fold.pending_permission;
    if (s.fold.status !== "waiting_for_permission" || !pending) {
      throw new SessionError("SESSION_NOT_READY", `session ${r.session_id} has no pending permission prompt (it is ${s.fold.status}).`, {
        suggestion: "Call wait_for_completion; it reports pending_permission when a prompt opens.",
      });
    }
    const b = this.backend(r.backend);
    const seq = pending.seq;
    const dialog = /Do you want to proceed\?/;
    // PermissionRequest can come before the dialog is drawn (2.1.330), and the CLI ignores keys in the first
    // ~0.2 s after it opens: wait (bounded) until it shows, then a moment more.
    let screen = "";
    const t0 = Date.now();
    let seenAt = t0;
    while (!dialog.test((screen = await b.screen(r.session_id).catch(() => ""))) && Date.now() < t0 + 5000 && s.fold.pending_permission?.seq === seq) {
      await sleep(50);
      seenAt = Date.now();
    }
    const wait = 350 - (Date.now() - seenAt);
    if (wait > 0) await sleep(wait);
    // The digits differ between versions (2.1.330 inserts "3. Yes, and switch to auto mode" before No): read them.
    // Unread, deny is Esc (the dialog's own cancel; a "3" would switch 2.1.330 to auto mode and run the tool).
    const key = (permissionDigit(screen, input.decision) ?? (input.decision === "allow" ? "1" : input.decision === "allow_always" ? "2" : "Escape")) as Key;
    for (let attempt = 1; attempt <= 3; attempt++) {
      await b.keys(r.session_id, [key]);
      // A hook follows an allowed tool; nothing follows a denial, so the screen tells whether the dialog is gone.
      let gone = false;
      const f = await s.waitFor((x) => x.pending_permission?.seq !== seq || gone, {
        timeoutMs: 1500 * attempt,
        tickMs: 100,
        tick: async () => {
          screen = await b.screen(r.session_id).catch(() => screen);
          gone = !dialog.test(screen);
        },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      if (f && s.fold.pending_permission?.seq !== seq) return { session_id: r.session_id, answered: true, decision: input.decision, tool_name: pending.tool_name, status: s.fold.status };
      if (gone) {
        if (input.decision !== "deny" && s.fold.pending_permission?.seq === seq) await this.emit(r.session_id, { hook_event_name: "cs:answered", permission_seq: seq });
        // The real CLI ends the turn on "No" like an Esc ("Interrupted", no Stop hook): confirm it on screen.
        for (let i = 0; i < 30 && input.decision === "deny" && s.fold.pending_permission?.seq === seq; i++) {
          if (showsStoppedTurn(screen)) {
            await this.emit(r.session_id, { hook_event_name: "cs:interrupted" });
            break;
          }
          await sleep(100);
          screen = await b.screen(r.session_id).catch(() => "");
        }
        await this.flushed();
        return { session_id: r.session_id, answered: true, decision: input.decision, tool_name: pending.tool_name, status: s.fold.status };
      }
    }
    throw new SessionError("TIMEOUT", `the permission dialog of ${r.session_id} did not take the answer.`);
  }

  async interrupt(input: { session_id: string; timeout_ms?: number }, ctx: CallContext = {}): Promise<Record<string, unknown>> {
    const r = await this.record(input.session_id);
    const s = await this.follow(input.session_id);
    this.checkUsable(r, s.fold.status);
    if (s.fold.status !== "busy" && s.fold.status !== "waiting_for_permission") {
      return { session_id: r.session_id, interrupted: false, status: s.fold.status };
    }
    const b = this.backend(r.backend);
    const id = r.session_id;
    const deadline = Date.now() + (input.timeout_ms ?? 5000);
    const stillBusy = () => s.fold.status === "busy" || s.fold.status === "waiting_for_permission";
    // Esc fires no hook, so the screen must show the turn stop. A frame read too early can look idle (the busy
    // frame not drawn yet): wait, bounded, until the turn shows as busy before pressing Esc, and believe a stopped
    // screen only once it has held for a moment.
    for (let t = Date.now(); Date.now() - t < 2000 && s.fold.status === "busy"; await sleep(50)) {
      if (showsBusy(await b.screen(id).catch(() => ""))) break;
    }
    let escAt = Date.now();
    let presses = 1;
    await b.keys(id, ["Escape"]);
    let stoppedSince: number | undefined;
    while (Date.now() < deadline && stillBusy()) {
      if (ctx.signal?.aborted) throw new SessionError("CANCELLED", "the request was cancelled");
      const screen = await b.screen(id).catch(() => "");
      if (showsInterrupted(screen)) {
        await this.emit(id, { hook_event_name: "cs:interrupted" });
        break;
      }
      if (showsStoppedTurn(screen)) {
        stoppedSince ??= Date.now();
        if (Date.now() - stoppedSince >= 250) {
          // Esc before any reply puts the prompt back into the input box: clear it so the next paste stands alone.
          if (inputText(screen)) await b.keys(id, ["C-c"]);
          await this.emit(id, { hook_event_name: "cs:interrupted" });
          break;
        }
      } else {
        stoppedSince = undefined;
        if (Date.now() - escAt > 1500 && presses < 3) {
          presses += 1;
          escAt = Date.now();
          await b.keys(id, ["Escape"]);
        }
      }
      await sleep(50);
    }
    await this.flushed();
    const st = s.fold.status;
    return { session_id: r.session_id, interrupted: st !== "busy" && st !== "waiting_for_permission", status: st };
  }

  // ---------------------------------------------------------------- kill / list / stream

  async kill(input: { session_id: string; force?: boolean; save_state?: boolean; reason?: string }): Promise<Record<string, unknown>> {
    const killed_at = new Date().toISOString();
    const r = await this.store.get(input.session_id);
    if (!r) return { session_id: input.session_id, status: "not_found", state_saved: false, killed_at };
    const b = this.backends[r.backend];
    const s = await this.follow(r.session_id);
    let status: "killed" | "already_dead" = "already_dead";
    let exitCode: number | undefined = s.fold.exit_code;
    const alive = b ? (r.backend === "tmux" ? (await b.list()).get(r.session_id)?.alive === true : isLive(s.fold.status)) : false;
    if (b && alive) {
      const res = await b.kill(r.session_id, { graceMs: input.force ? 200 : this.cfg.killGraceMs, ...(r.pid ? { pid: r.pid } : {}) });
      status = "killed";
      if (res.exitCode !== undefined) exitCode = res.exitCode;
    }
    if (b) await b.remove(r.session_id).catch(() => {});
    this.clearDeadline(r.session_id);
    if (isLive(s.fold.status)) await this.emit(r.session_id, { hook_event_name: "cs:exit", ...(exitCode !== undefined ? { exit_code: exitCode } : {}) });
    await this.flushed();
    const save = input.save_state !== false;
    if (save) {
      await this.store.patch(r.session_id, (rec) => {
        applyFold(rec, s.fold);
        rec.status = "dead";
        rec.killed_at = killed_at;
        delete rec.pid;
        if (exitCode !== undefined) rec.exit_code = exitCode;
        if (input.reason) rec.error_log = [...rec.error_log, `${killed_at} ended: ${input.reason}`].slice(-20);
      });
    } else {
      await this.store.update((st) => {
        delete st.sessions[r.session_id];
      });
      this.live.get(r.session_id)?.close();
      this.live.delete(r.session_id);
      await rm(this.paths(r.session_id).dir, { recursive: true, force: true });
    }
    const out: Record<string, unknown> = { session_id: r.session_id, status, state_saved: save, killed_at };
    if (exitCode !== undefined) out.exit_code = exitCode;
    return out;
  }

  async list(input: { status_filter?: "all" | "active" | "inactive" | "error"; team_filter?: string; limit?: number; include_metadata?: boolean }): Promise<Record<string, unknown>> {
    const state = await this.store.read();
    const records = Object.values(state.sessions);
    // One tmux call for all sessions, whatever their number.
    const tmuxLive = this.backends.tmux && records.some((r) => r.backend === "tmux" && !r.killed_at) ? await this.backends.tmux.list() : new Map();
    const out: Array<Record<string, unknown>> = [];
    let filtered = 0;
    for (const r0 of records.sort((a, b) => a.created_at.localeCompare(b.created_at))) {
      let r = r0;
      const followed = this.live.get(r.session_id);
      if (followed) {
        // What this process has folded may be newer than the file (writes are coalesced).
        r = structuredClone(r);
        applyFold(r, followed.fold);
      }
      if (isLive(r.status) && r.backend === "tmux" && !tmuxLive.get(r.session_id)?.exists && r.status !== "starting") {
        await this.markVanished(r);
        r = { ...r, status: "dead" };
      }
      // Claude said it ended (SessionEnd) but something in its terminal still runs: a zombie, for kill_session.
      if (r.status === "dead" && r.backend === "tmux" && tmuxLive.get(r.session_id)?.alive) r = { ...r, status: "zombie" };
      if (input.status_filter && input.status_filter !== "all" && statusGroup(r.status) !== input.status_filter) continue;
      if (input.team_filter && r.team_name !== input.team_filter) continue;
      filtered += 1;
      if (input.limit !== undefined && out.length >= input.limit) continue;
      out.push(input.include_metadata ? { ...r, survives_restart: r.backend === "tmux" } : { ...this.summary(r) });
    }
    return { sessions: out, total_count: records.length, filtered_count: filtered };
  }

  private summary(r: SessionRecord): SessionSummary {
    const s: SessionSummary = {
      session_id: r.session_id,
      claude_session_id: r.claude_session_id,
      status: r.status,
      backend: r.backend,
      survives_restart: r.backend === "tmux",
      cwd: r.cwd,
      created_at: r.created_at,
      turn_count: r.turn_count,
    };
    if (r.pid !== undefined && isLive(r.status)) s.pid = r.pid;
    if (r.last_active) s.last_active = r.last_active;
    if (r.team_name) s.team_name = r.team_name;
    if (r.teammate_name) s.teammate_name = r.teammate_name;
    if (r.model) s.model = r.model;
    if (r.pending_permission && r.status === "waiting_for_permission") s.pending_permission = { tool_name: r.pending_permission.tool_name, tool_input: r.pending_permission.tool_input };
    const attach = isLive(r.status) ? this.backends[r.backend]?.attachCommand?.(r.session_id) : undefined;
    if (attach) s.attach_command = attach;
    return s;
  }

  async stream(
    input: { session_id: string; mode: "screen" | "log" | "transcript"; cursor?: string; lines?: number; follow?: boolean; timeout_ms?: number },
    ctx: CallContext = {},
  ): Promise<Record<string, unknown>> {
    const r = await this.record(input.session_id);
    if (input.mode === "screen") {
      const b = this.backend(r.backend);
      const s = await this.follow(r.session_id);
      if (!isLive(s.fold.status)) throw new SessionError("SESSION_DEAD", `session ${r.session_id} is ${s.fold.status}; there is no screen.`, { suggestion: "Use mode log or transcript to read what it did." });
      let text = (await b.screen(r.session_id)).replace(/\s+$/, "");
      if (input.lines) text = text.split("\n").slice(-input.lines).join("\n");
      return { session_id: r.session_id, mode: "screen", text, status: s.fold.status };
    }
    const file = input.mode === "log" ? await this.rawLog(r) : transcriptFile(r, this.live.get(r.session_id)?.fold);
    if (file === undefined) {
      throw new SessionError("INVALID_ARGUMENT", `the log_file of session ${r.session_id} was replaced by another file; it is not read.`, { suggestion: "Use mode transcript or screen." });
    }
    const cursor = parseCursor(input.cursor);
    const read = async () => {
      if (input.mode === "log") {
        if (cursor === undefined) {
          const { text, end } = await readTail(file, Math.max(64 * 1024, (input.lines ?? 100) * 400));
          let clean = cleanLog(text);
          clean = clean.split("\n").slice(-(input.lines ?? 100)).join("\n");
          return { text: clean, cursor: end, fresh: true };
        }
        const { text, end } = await readFrom(file, cursor);
        return { text: cleanLog(text), cursor: end, fresh: text.length > 0 };
      }
      const { items, cursor: next } = await readTranscript(file, cursor ?? 0);
      const shown = cursor === undefined && input.lines ? items.slice(-input.lines) : items;
      return { items: shown, cursor: next, fresh: items.length > 0 };
    };
    let res: { text?: string; items?: TranscriptItem[]; cursor: number; fresh: boolean } = await read();
    if (!res.fresh && input.follow) {
      await waitForChange(file, input.timeout_ms ?? 30_000, ctx.signal);
      res = await read();
    }
    const out: Record<string, unknown> = { session_id: r.session_id, mode: input.mode, cursor: String(res.cursor) };
    if (res.text !== undefined) out.text = res.text;
    if (res.items !== undefined) out.items = res.items;
    return out;
  }

  // ---------------------------------------------------------------- checks

  /** MAX_CONCURRENT_SESSIONS, checked under the store's lock (`except`: the session being resumed). */
  private assertRoom(sessions: Record<string, SessionRecord>, except?: string): void {
    const live = Object.values(sessions).filter((r) => isLive(r.status) && r.session_id !== except).length;
    if (live >= this.cfg.maxSessions) {
      throw new SessionError("LIMIT_REACHED", `${live} sessions are running; the limit is ${this.cfg.maxSessions} (MAX_CONCURRENT_SESSIONS).`);
    }
  }

  private checkUsable(r: SessionRecord, status: Status): void {
    if (status === "dead" || status === "zombie") throw new SessionError("SESSION_DEAD", `session ${r.session_id} is ${status}.`);
    if (status === "error") throw new SessionError("SESSION_DEAD", `session ${r.session_id} failed to start: ${r.error_log.at(-1) ?? "unknown reason"}`);
    if (status === "starting") throw new SessionError("SESSION_NOT_READY", `session ${r.session_id} is still starting.`);
  }

  /** A prompt as it will be typed, or INVALID_ARGUMENT / PERMISSION_DENIED (see prompt.ts). */
  private prompt(m: string, what: string, bashMode?: boolean): string {
    return preparePrompt(m, { maxChars: this.cfg.maxMessageChars, allowBashMode: this.cfg.allowBashMode, what, ...(bashMode ? { bashMode } : {}) });
  }

  private checkEnv(env: Record<string, string> | undefined): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(env ?? {})) {
      if (!ENV_NAME.test(k)) throw new SessionError("INVALID_ARGUMENT", `env name ${JSON.stringify(k)} is not a valid variable name.`);
      if (typeof v !== "string" || v.includes("\0")) throw new SessionError("INVALID_ARGUMENT", `env ${k} must be a string without NUL characters.`);
      out[k] = v;
    }
    return out;
  }

  private checkPermissionMode(mode: string | undefined): void {
    if (mode !== "bypassPermissions") return;
    if (!this.cfg.allowBypassPermissions) {
      throw new SessionError("PERMISSION_DENIED", "permission_mode bypassPermissions is refused by this server.", {
        suggestion: "Start the server with CLAUDE_SESSIONS_ALLOW_BYPASS=1 to allow it (as root, Claude Code also needs IS_SANDBOX=1).",
      });
    }
    if (process.getuid?.() === 0 && process.env.IS_SANDBOX !== "1") {
      throw new SessionError("PERMISSION_DENIED", "Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1 is set.", {
        suggestion: "Run the server as a normal user, or set IS_SANDBOX=1 in the server's environment if this machine is a sandbox.",
      });
    }
  }

  private async checkCwd(dir: string, what = "cwd"): Promise<string> {
    if (typeof dir !== "string" || !dir.trim()) throw new SessionError("INVALID_ARGUMENT", `${what} is empty.`);
    if (dir.includes("\0")) throw new SessionError("INVALID_ARGUMENT", `${what} contains a NUL character.`);
    const abs = resolve(dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir);
    const st = await stat(abs).catch(() => undefined);
    if (!st?.isDirectory()) throw new SessionError("INVALID_ARGUMENT", `${what} ${JSON.stringify(dir)} is not an existing directory.`);
    return abs;
  }

  private claudeBinary(): string {
    const found = findClaude(this.cfg.claudePath);
    if (!found.path) {
      throw new SessionError("CLAUDE_NOT_FOUND", `the claude binary was not found. Looked in: ${found.searched.join(", ")}`, {
        details: { searched: found.searched },
      });
    }
    return found.path;
  }

  private dopplerFor(d: { project?: string; config?: string } | undefined): { path: string; project?: string; config?: string } | undefined {
    const project = d?.project ?? (d ? this.cfg.dopplerProject : undefined);
    const config = d?.config ?? (d ? this.cfg.dopplerConfig : undefined);
    if (!d) return undefined;
    for (const [k, v] of [["project", project], ["config", config]] as const) {
      if (v !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(v)) throw new SessionError("INVALID_ARGUMENT", `doppler ${k} ${JSON.stringify(v)} is not a valid Doppler name.`);
    }
    const found = findOnPath("doppler", this.cfg.dopplerPath);
    if (!found.path) {
      throw new SessionError("DOPPLER_ERROR", `the doppler CLI was not found (${this.cfg.dopplerPath ? `DOPPLER_PATH=${this.cfg.dopplerPath}` : "not on PATH"}).`, {
        suggestion: "Install the Doppler CLI (https://docs.doppler.com/docs/install-cli) or set DOPPLER_PATH.",
      });
    }
    return { path: found.path, ...(project ? { project } : {}), ...(config ? { config } : {}) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.deadlines.values()) clearTimeout(t);
    await Promise.all([...this.live.values()].map((s) => s.refresh()));
    await this.flushed();
    for (const s of this.live.values()) s.close();
    this.live.clear();
  }
}

// ---------------------------------------------------------------- converters

/** The session's own variables on top of the caller's `env`: its id and team names, for hooks and tools inside. */
function sessionEnv(r: SessionRecord, env: Record<string, string>): Record<string, string> {
  return {
    ...env,
    CLAUDE_SESSIONS_ID: r.session_id,
    ...(r.team_name ? { CLAUDE_TEAM_NAME: r.team_name } : {}),
    ...(r.teammate_name ? { CLAUDE_TEAMMATE_NAME: r.teammate_name } : {}),
  };
}

/** The Doppler project/config a session was started with, for resume_session to wrap it again. */
function storedDoppler(r: SessionRecord): { project?: string; config?: string } | undefined {
  if (!r.doppler_project && !r.doppler_config) return undefined;
  return { ...(r.doppler_project ? { project: r.doppler_project } : {}), ...(r.doppler_config ? { config: r.doppler_config } : {}) };
}

function pickClaudeOptions(o: ClaudeOptions): ClaudeOptions {
  const out: ClaudeOptions = {};
  if (o.model) out.model = o.model;
  if (o.permission_mode) out.permission_mode = o.permission_mode;
  if (o.append_system_prompt) out.append_system_prompt = o.append_system_prompt;
  if (o.add_dirs?.length) out.add_dirs = [...o.add_dirs];
  if (o.allowed_tools?.length) out.allowed_tools = [...o.allowed_tools];
  if (o.disallowed_tools?.length) out.disallowed_tools = [...o.disallowed_tools];
  return out;
}

function publicPending(p: PendingPermission): { tool_name: string; tool_input: unknown } {
  return { tool_name: p.tool_name, tool_input: p.tool_input };
}

export function applyFold(r: SessionRecord, f: Folded): void {
  const wasLive = isLive(r.status);
  r.status = f.status === "starting" && !wasLive && r.status !== "starting" ? r.status : f.status;
  if (f.claude_session_id) r.claude_session_id = f.claude_session_id;
  r.turn_count = f.turn_count;
  if (f.last_response !== undefined && f.last_response !== r.last_response) {
    r.responses_received += 1;
    r.total_chars_received += f.last_response.length;
    r.last_response = f.last_response;
  }
  if (f.last_error) r.last_error = f.last_error;
  else delete r.last_error;
  if (f.pending_permission) r.pending_permission = publicPending(f.pending_permission);
  else delete r.pending_permission;
  if (f.exit_code !== undefined) r.exit_code = f.exit_code;
  if (f.last_event_at) r.last_active = f.last_event_at;
  if (!isLive(f.status)) delete r.pid;
}

function transcriptFile(r: SessionRecord, f: Folded | undefined): string {
  return f?.transcript_path ?? transcriptPath(process.env.HOME ?? homedir(), r.cwd, r.claude_session_id);
}

function parseCursor(c: string | undefined): number | undefined {
  if (c === undefined || c === "") return undefined;
  const n = Number(c);
  if (!Number.isInteger(n) || n < 0) throw new SessionError("INVALID_ARGUMENT", `cursor ${JSON.stringify(c)} is not a cursor returned by stream_output.`);
  return n;
}

function cleanLog(text: string): string {
  return stripVTControlCharacters(text).replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

/** Resolves when the file changes or the time is up (fs.watch: no polling). */
function waitForChange(file: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let w: ReturnType<typeof watch> | undefined;
    const done = (err?: unknown) => {
      clearTimeout(t);
      w?.close();
      signal?.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onAbort = () => done(new SessionError("CANCELLED", "the request was cancelled"));
    const t = setTimeout(() => done(), timeoutMs);
    try {
      w = watch(file, { persistent: false }, () => done());
    } catch {
      /* the file does not exist yet: wait out the timeout */
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

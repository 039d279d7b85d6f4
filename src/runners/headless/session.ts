/**
 * One long-lived headless Claude Code session: the real CLI run by the Agent SDK's query() in
 * streaming-input mode (stream-json over stdin/stdout, no terminal). Its events.jsonl fills exactly as for an
 * interactive session: the turn's hook events come to in-process callbacks and are written here (EventAppender,
 * under the hooks' lock), the process's SessionStart when the CLI answers initialize (started()), SessionEnd and
 * the SessionStart of /clear and /compact through the hook command in its settings. The status is the
 * fold of that log (src/events/reducer.ts); where the CLI ends a turn without a hook, the engine appends the
 * equivalent `cs:` event through the same appender.
 */
import { spawn } from "node:child_process";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  HookInput,
  HookJSONOutput,
  Query,
  SDKMessage,
  SDKResultMessage,
  SpawnOptions,
  SpawnedProcess,
} from "@anthropic-ai/claude-agent-sdk";
import writeFileAtomic from "write-file-atomic";
import { CALLBACK_EVENTS, HEADLESS_HOOKS, hooksSettings } from "../../claude/hooks.js";
import { transcriptPath } from "../../claude/transcript.js";
import { EventAppender } from "../../events/appender.js";
import { SessionError } from "../../core/errors.js";
import type { LiveSession } from "../../events/live.js";
import type { Folded, LogEvent } from "../../events/reducer.js";
import { signalGroup } from "../../util/proc/process.js";
import { PromptQueue } from "./input.js";
import { loadSdk } from "./sdk.js";
import { buildSdkOptions } from "./options.js";
import { DEFAULT_PERMISSION_TIMEOUT_MS, PermissionBroker, type Answered } from "./permissions.js";
import { savedTotals, toTurnResult, zeroTotals, type Totals } from "./result.js";
import type { HeadlessOptions, PermissionAnswer, PermissionRequestInfo, TurnResult } from "./types.js";

interface Turn {
  resolve: (r: TurnResult) => void;
  reject: (e: unknown) => void;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const STDERR_KEEP = 8000;

export class HeadlessSession {
  readonly claudeSessionId: string;
  /** The CLI's pid (leader of its own process group), once spawned. */
  pid: number | undefined;
  /** Resolves when the CLI process has ended (and `cs:exit` is in the log). */
  readonly exited: Promise<ExitInfo>;

  private readonly live: LiveSession;
  /** Writes the hook callbacks' events and the engine's own, in order, under the log's lock. */
  private readonly appender: EventAppender;
  private readonly input = new PromptQueue();
  private readonly broker: PermissionBroker;
  private q: Query | undefined;
  private current: Turn | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private interrupting = false;
  private closing = false;
  private exitInfo: ExitInfo | undefined;
  private markExited: (e: ExitInfo) => void = () => {};
  private totals: Totals = zeroTotals();
  private stderrTail = "";
  private pumpError: unknown;
  private startWritten = false;

  private constructor(
    private readonly o: HeadlessOptions,
    private readonly sdkOptions: ReturnType<typeof buildSdkOptions>["options"],
    claudeSessionId: string,
  ) {
    this.claudeSessionId = claudeSessionId;
    this.exited = new Promise((resolve) => (this.markExited = resolve));
    this.live = o.live;
    this.appender = new EventAppender(o.events_path, (e) => {
      this.stderrTail = (this.stderrTail + `\nevents log: ${String(e)}`).slice(-STDERR_KEEP);
    });
    this.broker = new PermissionBroker(
      o.permission_timeout_ms ?? DEFAULT_PERMISSION_TIMEOUT_MS,
      (req) => o.on_permission?.(req),
      (a) => this.markAnswered(a),
    );
  }

  /**
   * Starts the CLI. Unless the session layer runs the session (`managed`), first writes the hooks settings and
   * appends `cs:spawn`, and resolves once SessionStart fired.
   */
  static async start(o: HeadlessOptions): Promise<HeadlessSession> {
    const plan = buildSdkOptions(o);
    if (!o.managed) {
      const settings = hooksSettings(o.events_path, undefined, HEADLESS_HOOKS);
      await writeFileAtomic(o.settings_path, JSON.stringify(settings, null, 2) + "\n", { mode: 0o600 });
      await appendFile(o.events_path, "", { mode: 0o600 });
    }
    const s = new HeadlessSession(o, plan.options, plan.claudeSessionId);
    if (o.resume) {
      // Claude's config directory (transcripts live under it): CLAUDE_CONFIG_DIR, else ~/.claude.
      const env = plan.options.env;
      const configDir = env?.CLAUDE_CONFIG_DIR || (env?.HOME ? join(env.HOME, ".claude") : undefined);
      if (configDir) s.totals = await savedTotals(transcriptPath(configDir, o.cwd, o.resume));
    }
    if (!o.managed) {
      await s.emit({
        hook_event_name: "cs:spawn",
        claude_session_id: plan.claudeSessionId,
        ...(o.generation !== undefined ? { generation: o.generation } : {}),
      });
      // The fold starts the new process from here (a resumed log ends with the old one's exit).
      await s.live.refresh();
    }
    const { query } = await loadSdk();
    s.launch(query);
    if (!o.managed) await s.waitReady(o.start_timeout_ms ?? 30_000);
    return s;
  }

  /** The fold of the session's events log: status, turns, pending permission, last response. */
  get fold(): Folded {
    return this.live.fold;
  }

  /** A turn is running or queued in the engine. */
  get busy(): boolean {
    return this.current !== undefined || this.queued > 0;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** Why the CLI ended (its exit and the last lines of its stderr), for error messages. */
  get endedWhy(): string {
    return this.deadError().message;
  }

  /** The last few KB the CLI wrote to stderr (for error messages). */
  get stderr(): string {
    return this.stderrTail;
  }

  /** Waits until `done(fold)` holds (undefined when the time is up). */
  waitFor(done: (f: Folded) => boolean, timeoutMs: number): Promise<Folded | undefined> {
    return this.live.waitFor(done, { timeoutMs });
  }

  /**
   * Sends one prompt as given (no terminal: every byte reaches the CLI) and resolves with the turn's result.
   * A prompt sent while a turn runs waits for it: each prompt is its own turn with its own result.
   */
  /** Each turn's answer is also in its result (output_schema's structured_output), not only in the Stop hook's reply. */
  get answersInResult(): boolean {
    return this.o.output_schema !== undefined;
  }

  send(prompt: string, opts: { verbatim?: boolean } = {}): Promise<TurnResult> {
    if (this.closing || this.exitInfo) return Promise.reject(new SessionError("SESSION_DEAD", "the headless session has ended"));
    this.queued += 1;
    const run = this.chain.then(() => {
      this.queued -= 1;
      return this.runTurn(prompt, opts.verbatim ?? this.o.verbatim_prompts ?? false);
    });
    this.chain = run.catch(() => {});
    return run;
  }

  private runTurn(prompt: string, verbatim: boolean): Promise<TurnResult> {
    if (this.exitInfo) return Promise.reject(this.deadError());
    return new Promise<TurnResult>((resolve, reject) => {
      this.current = { resolve, reject };
      this.interrupting = false;
      this.input.push(prompt, { verbatim });
    });
  }

  /** Interrupts the running turn (it resolves with `interrupted: true`). False when no turn runs. */
  async interrupt(): Promise<boolean> {
    if (!this.current || !this.q) return false;
    this.interrupting = true;
    await this.q.interrupt();
    return true;
  }

  /** Permission requests waiting for an answer, oldest first. */
  pendingPermissions(): PermissionRequestInfo[] {
    return this.broker.list();
  }

  /** Answers a waiting request (default: the oldest). Undefined when none waits. */
  respondPermission(answer: PermissionAnswer, id?: string): PermissionRequestInfo | undefined {
    return this.broker.respond(answer, id);
  }

  /** Ends the session: the CLI gets EOF and ends as on /exit (SessionEnd fires); killed after `graceMs`. */
  async close(graceMs = 5000): Promise<ExitInfo> {
    if (!this.closing) {
      this.closing = true;
      this.broker.denyAll("The session is closing.");
      this.input.end();
      this.q?.close();
      const t = setTimeout(() => this.kill("SIGKILL"), graceMs);
      await this.exited;
      clearTimeout(t);
    }
    return this.exited;
  }

  /** Signals the CLI's process group (kill_session force). */
  kill(sig: NodeJS.Signals = "SIGTERM"): void {
    if (this.pid !== undefined && !this.exitInfo) signalGroup(this.pid, sig);
  }

  // ------------------------------------------------------------------ internals

  private launch(query: typeof import("@anthropic-ai/claude-agent-sdk").query): void {
    // The turn's hook events as in-process callbacks: the CLI asks this process over its stdio (no hook process, no
    // wait for a write) and each event is queued for the log in the order the CLI gave them.
    const hook = (input: HookInput): Promise<HookJSONOutput> => {
      this.started();
      this.appender.push({ ...input, ts: new Date().toISOString() });
      return Promise.resolve({});
    };
    const options = {
      ...this.sdkOptions,
      hooks: Object.fromEntries(CALLBACK_EVENTS.map((e) => [e, [{ hooks: [hook] }]])),
      canUseTool: this.broker.canUseTool,
      spawnClaudeCodeProcess: (so: SpawnOptions) => this.spawnCli(so),
    };
    this.q = query({ prompt: this.input, options });
    // The CLI answers initialize once it takes input: the process's start (HEADLESS_HOOKS: no SessionStart command).
    this.q.initializationResult().then(
      () => this.started(),
      () => {},
    );
    void this.pump(this.q);
  }

  /**
   * The process's SessionStart, written once, before any of its hook events: when the CLI answered the SDK's
   * initialize, or with the first callback if that comes first. The line is the hook's under the SDK (source startup,
   * resume, or fork with the fork's new id), marked `reported_by: "sdk"`.
   */
  private started(): void {
    if (this.startWritten || this.exitInfo) return;
    this.startWritten = true;
    this.appender.push({
      hook_event_name: "SessionStart",
      source: this.o.resume ? (this.o.fork_session ? "fork" : "resume") : "startup",
      session_id: this.claudeSessionId,
      cwd: this.o.cwd,
      reported_by: "sdk",
      ts: new Date().toISOString(),
    });
  }

  /** The SDK's default spawn, plus a process group of its own (kill reaches everything it started) and the exit status. */
  private spawnCli(so: SpawnOptions): SpawnedProcess {
    // Sandboxed: the launcher (outside the sandbox, this process group's leader) runs the SDK's command under bubblewrap.
    const l = this.o.launcher;
    const [cmd, args] = l ? [l.node, [l.launcher, l.spec_path, "--", so.command, ...so.args]] : [so.command, so.args];
    const child = spawn(cmd, args, {
      cwd: so.cwd,
      env: so.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      windowsHide: true,
    });
    this.pid = child.pid;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-STDERR_KEEP);
    });
    child.on("error", (e) => {
      this.stderrTail += `\n${e.message}`;
      if (child.pid === undefined) void this.onExit({ code: null, signal: null });
    });
    child.on("exit", (code, signal) => void this.onExit({ code, signal }));
    if (so.signal) so.signal.addEventListener("abort", () => this.kill("SIGKILL"), { once: true });
    return child;
  }

  private async pump(q: Query): Promise<void> {
    try {
      for await (const m of q) await this.onMessage(m);
    } catch (e) {
      this.pumpError = e;
    }
    if (this.current) {
      // The stream ended inside a turn: the process is gone (its exit handler fails the turn) or about to be.
      const t = setTimeout(() => this.failTurn(this.deadError()), 2000);
      await this.exited;
      clearTimeout(t);
    }
  }

  private async onMessage(m: SDKMessage): Promise<void> {
    try {
      this.o.on_message?.(m);
    } catch {
      /* a listener's failure is not the session's */
    }
    if (m.type === "result") await this.onResult(m);
  }

  private async onResult(m: SDKResultMessage): Promise<void> {
    const interrupted = this.interrupting || m.terminal_reason === "aborted_streaming" || m.terminal_reason === "aborted_tools";
    const { turn, totals } = toTurnResult(m, this.totals, interrupted);
    this.totals = totals;
    // The CLI gave its Stop/StopFailure to the hook callback before this result: once the queue is written, it is in the file.
    await this.appender.flush();
    await this.live.refresh();
    const f = this.live.fold;
    if (f.turn_count < f.prompts_submitted) {
      if (interrupted) await this.emit({ hook_event_name: "cs:interrupted" });
      else
        await this.emit({
          hook_event_name: "cs:turn_failed",
          message: (turn.errors ?? []).join("; ") || turn.error_subtype || "the turn ended without a Stop hook",
          reason: turn.error_subtype ?? m.subtype,
        });
      await this.live.refresh();
    }
    const cur = this.current;
    this.current = undefined;
    this.interrupting = false;
    cur?.resolve(turn);
  }

  private failTurn(e: unknown): void {
    const cur = this.current;
    this.current = undefined;
    cur?.reject(e);
  }

  private deadError(): SessionError {
    const info = this.exitInfo;
    const how = info ? (info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`) : "stopped answering";
    const why =
      this.stderrTail.trim().split("\n").slice(-5).join("\n") || (this.pumpError instanceof Error ? this.pumpError.message : "");
    return new SessionError("SESSION_DEAD", `the Claude Code process ${how}${why ? `: ${why}` : ""}`);
  }

  private async onExit(info: ExitInfo): Promise<void> {
    if (this.exitInfo) return;
    this.exitInfo = info;
    this.broker.denyAll("The session ended.");
    const ev: LogEvent = { hook_event_name: "cs:exit" };
    if (info.code !== null) ev.exit_code = info.code;
    if (this.o.generation !== undefined) ev.generation = this.o.generation;
    await this.emit(ev).catch(() => {});
    await this.live.refresh();
    this.failTurn(this.deadError());
    this.markExited(info);
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const ready = this.live.waitFor((f) => f.status !== "starting", { timeoutMs });
    const outcome = await Promise.race([ready.then((f) => (f ? "ready" : "timeout")), this.exited.then(() => "exited")]);
    if (outcome === "ready" && this.live.fold.status === "ready") return;
    const why =
      outcome === "timeout"
        ? `SessionStart did not arrive within ${timeoutMs} ms`
        : `Claude Code ended during start-up (${this.deadError().message})`;
    await this.emit({ hook_event_name: "cs:start_failed", message: why.slice(0, 2000) }).catch(() => {});
    await this.close(1000);
    throw new SessionError(outcome === "timeout" ? "TIMEOUT" : "PROCESS_ERROR", why);
  }

  /** The engine's own events go after the callbacks' ones, under the same lock as the hook commands' lines. */
  private emit(ev: LogEvent): Promise<void> {
    this.appender.push({ ...ev, ts: new Date().toISOString() });
    return this.appender.flush();
  }

  private async markAnswered(a: Answered): Promise<void> {
    // canUseTool is called a few ms before the PermissionRequest hook runs: wait for that line, then say it
    // was answered (no hook fires between an answer and PostToolUse, and none at all after a deny).
    const key = JSON.stringify(a.request.tool_input);
    const f = await this.live.waitFor(
      (x) => x.pending_permission?.tool_name === a.request.tool_name && JSON.stringify(x.pending_permission.tool_input) === key,
      { timeoutMs: 2000 },
    );
    const seq = f?.pending_permission?.seq;
    if (seq === undefined || this.exitInfo) return;
    await this.emit({ hook_event_name: "cs:answered", permission_seq: seq }).catch(() => {});
  }
}

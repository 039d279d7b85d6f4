/**
 * Where headless sessions live: a backend-like home for HeadlessSession processes (the CLI through the Agent
 * SDK, no terminal), owned by this server process like a pty. spawn starts one; list/kill/remove work as on the
 * other hosts; it has no terminal (no paste, keys or screen: the headless runner says so in its capabilities).
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import {
  inProcessRef,
  ownedInProcess,
  type ConversationPlan,
  type Host,
  type HostRef,
  type KillResult,
  type Liveness,
  type Spawned,
} from "../host.js";
import type { Logger } from "../../util/log.js";
import { killTree } from "../end-tree.js";
import { noteRateLimitEvent, type RateLimitInfo } from "../../claude/account-windows.js";
import { logLine } from "./log-lines.js";
import { OPTION_FILES } from "../terminal/option-args.js";
import { headlessOptionsOf } from "./stored.js";
import { HeadlessSession } from "./session.js";

export interface HeadlessHostOptions {
  log: Logger;
  /** Unanswered permission requests are denied after this (CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS). */
  permissionTimeoutMs?: number;
  startTimeoutMs?: number;
}

const CLOSE_GRACE_MS = 3000;

/** A rate_limit_event's figures into the account's file; a failure to write is logged, never the session's. */
function noteWindows(file: string, info: RateLimitInfo, log: Logger): void {
  try {
    noteRateLimitEvent(file, info);
  } catch (e) {
    log.warn(`the account's usage windows: ${String(e)}`);
  }
}

export class HeadlessHost implements Host<ConversationPlan> {
  readonly kind = "headless" as const;
  readonly survivesRestart = false;
  private readonly sessions = new Map<string, { hs: HeadlessSession; log: WriteStream }>();

  constructor(private readonly o: HeadlessHostOptions) {}

  /** The running session of id, if this server runs it. */
  get(id: string): HeadlessSession | undefined {
    return this.sessions.get(id)?.hs;
  }

  /**
   * Starts the CLI on the session layer's files: it wrote settings.json, appended cs:spawn, follows the events log
   * (`spec.live`) and waits for start-up itself (the driver's awaitReady).
   */
  /** Its sessions live in a server process: this one's, or another live one's (that one reaches them). */
  owns(ref: HostRef | undefined): boolean {
    return ownedInProcess(ref);
  }

  async spawn(spec: ConversationPlan): Promise<Spawned> {
    const log = createWriteStream(spec.rawLogPath, { flags: "a", mode: 0o600 });
    log.on("error", (e) => this.o.log.warn(`${spec.id}: output.log: ${String(e)}`));
    try {
      const hs = await HeadlessSession.start({
        ...headlessOptionsOf(spec.options),
        cwd: spec.cwd,
        claude_path: spec.claude,
        events_path: spec.eventsPath,
        settings_path: join(spec.dir, "settings.json"),
        ...(spec.options.debug ? { debug_file: join(spec.dir, OPTION_FILES.debug) } : {}),
        base_env: spec.env,
        ...(spec.resume_at ? { resume_at: spec.resume_at } : {}),
        ...(spec.resume_id
          ? { resume: spec.resume_id, ...(spec.fork ? { fork_session: true, claude_session_id: spec.claude_session_id } : {}) }
          : { claude_session_id: spec.claude_session_id }),
        ...(spec.generation !== undefined ? { generation: spec.generation } : {}),
        live: spec.live,
        ...(spec.member_mcp_config ? { member_mcp_config: spec.member_mcp_config } : {}),
        ...(spec.launcher ? { launcher: spec.launcher } : {}),
        managed: true,
        ...(this.o.permissionTimeoutMs !== undefined ? { permission_timeout_ms: this.o.permissionTimeoutMs } : {}),
        ...(this.o.startTimeoutMs !== undefined ? { start_timeout_ms: this.o.startTimeoutMs } : {}),
        on_message: (m) => {
          const line = logLine(m);
          if (line) log.write(line);
          if (m.type === "rate_limit_event" && spec.windows_file) noteWindows(spec.windows_file, m.rate_limit_info, this.o.log);
        },
      });
      this.sessions.set(spec.id, { hs, log });
      void hs.exited.then(() => setTimeout(() => log.end(), 100));
      return { pid: hs.pid ?? 0, ref: inProcessRef() };
    } catch (e) {
      log.end();
      throw e;
    }
  }

  list(): Promise<Map<string, Liveness>> {
    const out = new Map<string, Liveness>();
    for (const [id, { hs }] of this.sessions)
      out.set(id, { exists: true, alive: hs.alive, ...(hs.pid !== undefined ? { pid: hs.pid } : {}) });
    return Promise.resolve(out);
  }

  async kill(id: string, opts: { graceMs: number; pid?: number }): Promise<KillResult> {
    const e = this.sessions.get(id);
    if (!e) return { forced: false };
    const { hs } = e;
    return killTree(id, hs.alive ? hs.pid : undefined, opts.graceMs, async () => {
      let forced = false;
      if (hs.alive) {
        if (opts.graceMs > 0) {
          // EOF on stdin: the CLI ends as on /exit (SessionEnd fires); SIGKILL after the grace.
          const t0 = Date.now();
          await hs.close(opts.graceMs);
          forced = Date.now() - t0 >= opts.graceMs;
        } else {
          forced = true;
          hs.kill("SIGKILL");
          await hs.exited;
        }
      }
      const info = await hs.exited;
      return info.code !== null ? { exitCode: info.code, forced } : { forced };
    });
  }

  async remove(id: string): Promise<void> {
    const e = this.sessions.get(id);
    if (!e) return;
    if (e.hs.alive) await this.kill(id, { graceMs: 1000 });
    if (this.sessions.get(id) === e) this.sessions.delete(id);
  }

  forget(id: string): void {
    const e = this.sessions.get(id);
    if (e && !e.hs.alive) this.sessions.delete(id);
  }

  get kept(): number {
    return this.sessions.size;
  }

  /** Ends every session (their SessionEnd and exit land in the logs): they live as long as this server. */
  async close(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.kill(id, { graceMs: CLOSE_GRACE_MS }).catch(() => undefined)));
    this.sessions.clear();
  }
}

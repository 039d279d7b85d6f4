/**
 * The driver for headless sessions: prompts go to the SDK's input stream (never typed), permission answers
 * to canUseTool, interrupts to the SDK's interrupt(). Turn ends come from the same hooks as on a terminal
 * (plus the engine's cs: events where the CLI runs none); the SDK's result of each turn gives its figures.
 */
import type { ModelUsage } from "@anthropic-ai/claude-agent-sdk";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import { priceOf } from "../../pricing.js";
import type {
  Delivery,
  Driver,
  DriverSession,
  PermissionAnswer,
  PromptAnswer,
  ReadyOptions,
  SessionCommand,
  TurnFigures,
} from "../driver.js";
import { commandDone, commandText } from "../command.js";
import type { HeadlessHost } from "./host.js";
import type { HeadlessSession } from "./session.js";
import type { TurnResult } from "./types.js";

/** How long a prompt may take to become a turn (UserPromptSubmit) once the CLI has it. */
const ACCEPT_MS = 30_000;
/** The result message follows the Stop hook by a few ms; a wait that saw the turn end gives it this long. */
const RESULT_MS = 3000;
/** Results kept per session (by prompt number) for the calls that ask for them. */
const KEEP = 32;

function usageOf(m: ModelUsage) {
  return {
    input_tokens: m.inputTokens,
    output_tokens: m.outputTokens,
    cache_creation_input_tokens: m.cacheCreationInputTokens,
    cache_read_input_tokens: m.cacheReadInputTokens,
  };
}

/** The SDK's result of a turn → the figures the tools report. */
export function figuresOf(t: TurnResult): TurnFigures {
  const out: TurnFigures = {
    usage: { ...t.usage },
    model_usage: Object.fromEntries(Object.entries(t.model_usage).map(([k, v]) => [k, usageOf(v)])),
    cost_usd: t.cost_usd,
    // The CLI prices the turn itself; the server can vouch for it only when it has a price for every model too.
    cost_complete: Object.keys(t.model_usage).every((m) => priceOf(m) !== undefined),
    duration_ms: t.duration_ms,
    duration_api_ms: t.duration_api_ms,
    num_turns: t.num_turns,
    stop_reason: t.stop_reason,
    permission_denials: t.permission_denials.map((d) => ({
      tool_name: d.tool_name,
      tool_use_id: d.tool_use_id,
      tool_input: d.tool_input,
    })),
  };
  if (t.error_subtype) out.error_subtype = t.error_subtype;
  if (t.structured_output !== undefined) out.structured_output = t.structured_output;
  return out;
}

export class HeadlessDriver implements Driver {
  /** Per session: the engine's result of each prompt, by prompt number. */
  private readonly results = new Map<string, Map<number, Promise<TurnResult>>>();

  constructor(private readonly host: HeadlessHost) {}

  forget(id: string): void {
    this.results.delete(id);
  }

  get kept(): number {
    return this.results.size;
  }

  private session(s: DriverSession): HeadlessSession {
    const hs = this.host.get(s.id);
    if (!hs?.alive)
      throw new SessionError("SESSION_DEAD", `session ${s.id} is not running on this server.`, {
        suggestion: "Use resume_session to start it again.",
      });
    return hs;
  }

  async awaitReady(s: DriverSession, opts: ReadyOptions, ctx: CallContext): Promise<void> {
    // The one wait for start-up: the engine runs on this fold and does not wait itself.
    const f = await s.live.waitFor((x) => x.status !== "starting", {
      timeoutMs: opts.timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (!f) throw new SessionError("TIMEOUT", `session ${s.id}: SessionStart did not arrive within ${opts.timeoutMs} ms.`);
    if (!isLive(f.status))
      throw new SessionError(
        "PROCESS_ERROR",
        `session ${s.id}: Claude Code ended during start-up (${this.host.get(s.id)?.endedWhy ?? f.last_error ?? f.status}).`,
      );
  }

  /** Hands the prompt to the engine and remembers its result under the prompt's number. */
  private submit(s: DriverSession, text: string): void {
    const hs = this.session(s);
    let byNo = this.results.get(s.id);
    if (!byNo) this.results.set(s.id, (byNo = new Map()));
    const last = Math.max(0, ...byNo.keys());
    const n = Math.max(s.live.fold.prompts_submitted, last) + 1;
    const p = hs.send(text);
    p.catch(() => {});
    byNo.set(n, p);
    for (const k of byNo.keys()) if (k <= n - KEEP) byNo.delete(k);
  }

  deliver(s: DriverSession, text: string, ctx: CallContext): Promise<Delivery> {
    return this.handOver(s, text, ACCEPT_MS, ctx);
  }

  private async handOver(s: DriverSession, text: string, acceptMs: number, ctx: CallContext): Promise<Delivery> {
    const before = s.live.fold.prompts_submitted;
    const sent_at = new Date().toISOString();
    this.submit(s, text);
    const f = await s.live.waitFor((x) => x.prompts_submitted > before || !isLive(x.status), {
      timeoutMs: acceptMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (!f) throw new SessionError("TIMEOUT", `session ${s.id}: the prompt did not become a turn within ${acceptMs} ms.`);
    if (!isLive(f.status))
      throw new SessionError("SESSION_DEAD", `session ${s.id} ended before taking the prompt.`, {
        suggestion: "Use resume_session to start it again.",
      });
    return { sent_at, attempts: 1 };
  }

  /** The first prompt, queued in the SDK's input while the CLI starts: it reads it once it is up, as a `claude -p` does. */
  async carried(s: DriverSession, text: string, startTimeoutMs: number, ctx: CallContext): Promise<Delivery> {
    return this.handOver(s, text, startTimeoutMs + ACCEPT_MS, ctx);
  }

  runShell(): Promise<string> {
    return Promise.reject(
      new SessionError("INVALID_ARGUMENT", "bash_mode needs Claude Code's interactive screen; headless sessions have none.", {
        suggestion: "Use a tmux or pty session for bash_mode, or ask Claude to run the command.",
      }),
    );
  }

  async answerPermission(s: DriverSession, answer: PermissionAnswer, ctx: CallContext): Promise<void> {
    const hs = this.session(s);
    if (!hs.respondPermission(answer)) {
      throw new SessionError("SESSION_NOT_READY", `session ${s.id} has no permission request waiting for an answer.`, {
        suggestion: "Call wait_for_completion; it reports pending_permission when one opens.",
      });
    }
    // The engine appends cs:answered once the answer is given; the fold then leaves waiting_for_permission.
    await s.live.waitFor((x) => x.status !== "waiting_for_permission", {
      timeoutMs: 5000,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  }

  async interrupt(s: DriverSession, timeoutMs: number, ctx: CallContext): Promise<void> {
    await this.session(s).interrupt();
    await s.live.waitFor((x) => x.status !== "busy" && x.status !== "waiting_for_permission", {
      timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  }

  /** No screen, so nothing can block a headless turn but a permission request (canUseTool): nothing to look at. */
  probe(): Promise<void> {
    return Promise.resolve();
  }

  answerPrompt(s: DriverSession): Promise<PromptAnswer> {
    return Promise.reject(
      new SessionError(
        "SESSION_NOT_READY",
        `session ${s.id} is headless: it has no screen, and only permission requests (respond_permission) wait for an answer.`,
        {
          suggestion: "Answer permission requests with respond_permission.",
        },
      ),
    );
  }

  /** The SDK takes slash commands as prompts (not verbatim): the CLI runs /clear or /compact and fires SessionStart. */
  async command(s: DriverSession, cmd: SessionCommand, timeoutMs: number, ctx: CallContext): Promise<void> {
    const hs = this.session(s);
    const after = s.live.fold.seq;
    hs.send(commandText(cmd), { verbatim: false }).catch(() => {});
    const f = await s.live.waitFor((x) => commandDone(x, cmd, after) || !isLive(x.status), {
      timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    if (f && commandDone(f, cmd, after)) return;
    if (f) throw new SessionError("SESSION_DEAD", `session ${s.id} ended during /${cmd.kind}.`);
    throw new SessionError(
      "TIMEOUT",
      `session ${s.id}: the CLI did not report /${cmd.kind} done (no SessionStart with source ${cmd.kind}) within ${timeoutMs} ms.`,
    );
  }

  screen(): Promise<string> {
    return Promise.reject(
      new SessionError("INVALID_ARGUMENT", "headless sessions have no screen.", {
        suggestion: "Use stream_output with mode log (assistant text, tool uses, results) or transcript.",
      }),
    );
  }

  async turnFigures(s: DriverSession, prompt: number, o: { now?: boolean } = {}): Promise<TurnFigures | undefined> {
    const p = this.results.get(s.id)?.get(prompt);
    if (!p) return undefined;
    // The SDK's result follows the Stop hook by 15–230 ms (issue 38); a structured answer is waited for all the same.
    const now = o.now === true && this.host.get(s.id)?.answersInResult !== true;
    let timer: NodeJS.Timeout | undefined;
    const late = now
      ? Promise.resolve(undefined)
      : new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), RESULT_MS)));
    try {
      const t = await Promise.race([p, late]);
      return t ? figuresOf(t) : undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}

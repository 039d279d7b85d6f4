/**
 * The terminal driver: Claude Code's interactive screen in a tmux pane or a PTY (the TerminalHost), driven by pastes
 * and keys, with hooks as the signal and the screen as the fallback where no hook fires.
 */
import { join } from "node:path";
import { DECISIONS_DIR } from "../../claude/hooks.js";
import type { TerminalHost } from "../host.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { Logger } from "../../util/log.js";
import type {
  Delivery,
  Driver,
  DriverSession,
  PermissionAnswer,
  ProbeOptions,
  PromptAnswer,
  ReadyOptions,
  SessionCommand,
} from "../driver.js";
import { typeCommand } from "./command.js";
import { deliver, runShell } from "./delivery.js";
import { interruptByEsc } from "./interrupt.js";
import { answerPrompt, probeScreen } from "./screen-prompt.js";
import { answerByHook, hookWaits } from "./hook-answer.js";
import { answerByKeys } from "./permission.js";
import { DRIVER_TIMING, type DriverTiming } from "./screen/screens.js";
import { awaitReady, carriedPrompt } from "./startup.js";

export class TerminalDriver implements Driver {
  constructor(
    private readonly host: TerminalHost,
    private readonly log: Logger,
    /** The state directory: a session's hook decisions go to `<stateDir>/<id>/decisions/`. */
    private readonly stateDir?: string,
    private readonly timing: DriverTiming = DRIVER_TIMING,
  ) {}

  awaitReady(s: DriverSession, opts: ReadyOptions, ctx: CallContext): Promise<void> {
    return awaitReady(this.host, s, opts, ctx, this.log, this.timing);
  }
  /** The first prompt is on the CLI's command line (runner.ts): wait for its UserPromptSubmit and compare. */
  carried(s: DriverSession, text: string, startTimeoutMs: number, ctx: CallContext): Promise<Delivery> {
    return carriedPrompt(s, text, startTimeoutMs, ctx);
  }
  deliver(s: DriverSession, text: string, ctx: CallContext): Promise<Delivery> {
    return deliver(this.host, s, text, ctx, this.log, this.timing);
  }
  runShell(s: DriverSession, text: string, ctx: CallContext): Promise<string> {
    return runShell(this.host, s, text, ctx, this.timing);
  }
  async answerPermission(s: DriverSession, answer: PermissionAnswer, ctx: CallContext): Promise<void> {
    // The permission channel: the session's PermissionRequest hook waits for a decision file.
    const p = s.live.fold.pending_permission;
    if (this.stateDir && hookWaits(p)) {
      if (await answerByHook(s, join(this.stateDir, s.id, DECISIONS_DIR), p, answer, ctx)) return;
      this.log.info(`permission hook of ${s.id} gave up waiting; answering its dialog by keys`);
    }
    // The fallback: the on-screen dialog, whose keys carry only the decision.
    if (answer.message !== undefined || answer.updated_input !== undefined) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "this request waits on Claude Code's on-screen dialog (its permission hook timed out or is off), which takes only allow, allow_always or deny.",
        {
          suggestion: "Leave out message and updated_input, or raise CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS for later requests.",
        },
      );
    }
    return answerByKeys(this.host, s, answer.decision, ctx);
  }
  interrupt(s: DriverSession, timeoutMs: number, ctx: CallContext): Promise<void> {
    return interruptByEsc(this.host, s, timeoutMs, ctx);
  }
  probe(s: DriverSession, o: ProbeOptions): Promise<void> {
    return probeScreen(this.host, s, o);
  }
  answerPrompt(s: DriverSession, choice: string | number, ctx: CallContext): Promise<PromptAnswer> {
    return answerPrompt(this.host, s, choice, ctx);
  }
  command(s: DriverSession, cmd: SessionCommand, timeoutMs: number, ctx: CallContext): Promise<void> {
    return typeCommand(this.host, s, cmd, timeoutMs, ctx, this.timing);
  }
  async screen(s: DriverSession): Promise<string> {
    return (await this.host.screen(s.id)).replace(/\s+$/, "");
  }
}

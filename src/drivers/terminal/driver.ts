/**
 * The terminal driver: Claude Code's interactive screen in a tmux pane or a PTY (the Backend), driven by pastes
 * and keys, with hooks as the signal and the screen as the fallback where no hook fires.
 */
import type { Backend } from "../../backends/backend.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { Logger } from "../../util/log.js";
import type { Delivery, Driver, DriverSession, PermissionAnswer, ReadyOptions } from "../driver.js";
import { deliver, enqueue, runShell } from "./delivery.js";
import { interruptByEsc, probeInterrupted } from "./interrupt.js";
import { answerByKeys } from "./permission.js";
import { awaitReady } from "./startup.js";

export class TerminalDriver implements Driver {
  constructor(
    private readonly backend: Backend,
    private readonly log: Logger,
  ) {}

  awaitReady(s: DriverSession, opts: ReadyOptions, ctx: CallContext): Promise<void> {
    return awaitReady(this.backend, s, opts, ctx, this.log);
  }
  deliver(s: DriverSession, text: string, ctx: CallContext): Promise<Delivery> {
    return deliver(this.backend, s, text, ctx, this.log);
  }
  enqueue(s: DriverSession, text: string): Promise<string> {
    return enqueue(this.backend, s, text);
  }
  runShell(s: DriverSession, text: string, ctx: CallContext): Promise<string> {
    return runShell(this.backend, s, text, ctx);
  }
  answerPermission(s: DriverSession, answer: PermissionAnswer, ctx: CallContext): Promise<void> {
    // The dialog's keys carry only the decision; a message or an edited input needs the hook channel.
    if (answer.message !== undefined || answer.updated_input !== undefined) {
      throw new SessionError("INVALID_ARGUMENT", "this session answers permissions through its on-screen dialog, which takes only allow, allow_always or deny.", {
        suggestion: "Leave out message and updated_input.",
      });
    }
    return answerByKeys(this.backend, s, answer.decision, ctx);
  }
  interrupt(s: DriverSession, timeoutMs: number, ctx: CallContext): Promise<void> {
    return interruptByEsc(this.backend, s, timeoutMs, ctx);
  }
  probe(s: DriverSession): Promise<void> {
    return probeInterrupted(this.backend, s);
  }
  async screen(s: DriverSession): Promise<string> {
    return (await this.backend.screen(s.id)).replace(/\s+$/, "");
  }
}

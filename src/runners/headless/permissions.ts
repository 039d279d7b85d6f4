/**
 * Permission requests of a headless session. The SDK calls `canUseTool` when a tool needs an answer; the
 * broker keeps it pending until respond() or the timeout (which denies, saying so), and maps our answer to
 * the SDK's PermissionResult.
 */
import type { CanUseTool, PermissionResult, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { DEFAULT_PERMISSION_TIMEOUT_MS } from "../../core/modes.js";
import type { PermissionAnswer, PermissionRequestInfo } from "./types.js";

export { DEFAULT_PERMISSION_TIMEOUT_MS };

interface Entry {
  info: PermissionRequestInfo;
  input: Record<string, unknown>;
  suggestions: PermissionUpdate[];
  finish: (r: PermissionResult) => void;
}

export interface Answered {
  request: PermissionRequestInfo;
  result: PermissionResult;
  /** "timeout" when nobody answered in time, "aborted" when the CLI gave up on it (interrupt). */
  by: "caller" | "timeout" | "aborted";
}

/** Our answer → the SDK's. allow_always applies every suggested rule (what "always allow" does in the CLI). */
export function toPermissionResult(
  answer: PermissionAnswer,
  input: Record<string, unknown>,
  suggestions: PermissionUpdate[],
): PermissionResult {
  if (answer.decision === "deny")
    return { behavior: "deny", message: answer.message?.trim() ? answer.message : "The user denied this tool use." };
  const r: PermissionResult = { behavior: "allow", updatedInput: answer.updated_input ?? input };
  if (answer.decision === "allow_always" && suggestions.length) r.updatedPermissions = suggestions;
  return r;
}

export function timeoutMessage(ms: number): string {
  return `Denied by claude-sessions: nobody answered this permission request within ${Math.round(ms / 1000)} s (permission timeout).`;
}

export class PermissionBroker {
  private readonly pending = new Map<string, Entry>();

  constructor(
    private readonly timeoutMs: number,
    private readonly onRequest: (req: PermissionRequestInfo) => void,
    /** Records the answer (cs:answered); the SDK gets the answer once this settles, so the log has it first. */
    private readonly onAnswered: (a: Answered) => Promise<void> | void,
  ) {}

  /** The SDK's callback. */
  readonly canUseTool: CanUseTool = (toolName, input, opts) =>
    new Promise<PermissionResult>((resolve) => {
      const info: PermissionRequestInfo = {
        id: opts.toolUseID,
        tool_name: toolName,
        tool_input: input,
        suggestions: opts.suggestions ?? [],
        since: new Date().toISOString(),
      };
      if (opts.title) info.title = opts.title;
      if (opts.decisionReason) info.decision_reason = opts.decisionReason;
      if (opts.blockedPath) info.blocked_path = opts.blockedPath;
      let done = false;
      const settle = (result: PermissionResult, by: Answered["by"]) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        opts.signal.removeEventListener("abort", onAbort);
        this.pending.delete(info.id);
        // The answer is in the events log before the CLI can act on it (PostToolUse, Stop), as a person's would be.
        void Promise.resolve()
          .then(() => this.onAnswered({ request: info, result, by }))
          .catch(() => {})
          .finally(() => resolve(result));
      };
      const timer = setTimeout(
        () => settle({ behavior: "deny", message: timeoutMessage(this.timeoutMs) }, "timeout"),
        this.timeoutMs,
      );
      const onAbort = () => settle({ behavior: "deny", message: "The request was cancelled." }, "aborted");
      opts.signal.addEventListener("abort", onAbort, { once: true });
      this.pending.set(info.id, { info, input, suggestions: opts.suggestions ?? [], finish: (r) => settle(r, "caller") });
      this.onRequest(info);
    });

  /** Requests waiting for an answer, oldest first. */
  list(): PermissionRequestInfo[] {
    return [...this.pending.values()].map((e) => e.info);
  }

  /** Answers the request `id` (default: the oldest). Returns what was answered, or undefined when nothing waits. */
  respond(answer: PermissionAnswer, id?: string): PermissionRequestInfo | undefined {
    const e = id === undefined ? this.pending.values().next().value : this.pending.get(id);
    if (!e) return undefined;
    e.finish(toPermissionResult(answer, e.input, e.suggestions));
    return e.info;
  }

  /** Denies everything still waiting (the session is closing). */
  denyAll(message: string): void {
    for (const e of [...this.pending.values()]) e.finish({ behavior: "deny", message });
  }
}

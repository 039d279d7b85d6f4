/**
 * One error class with a string code. Every failure that reaches a tool caller is a SessionError,
 * turned into an `isError` tool result in one place (server/result.ts).
 */
export const ERROR_CODES = [
  "INVALID_ARGUMENT",
  "UNSUPPORTED_OPTION",
  "SESSION_NOT_FOUND",
  "SESSION_BUSY",
  "SESSION_NOT_READY",
  "SESSION_DEAD",
  "TIMEOUT",
  "CANCELLED",
  "CLAUDE_NOT_FOUND",
  "TMUX_NOT_FOUND",
  "DOPPLER_ERROR",
  "PROCESS_ERROR",
  "STARTUP_BLOCKED",
  "PERMISSION_DENIED",
  "LIMIT_REACHED",
  "TURN_FAILED",
  "NODE_UNREACHABLE",
  "WAKE_FAILED",
  "ALREADY_EXISTS",
  "IDEMPOTENCY_MISMATCH",
  "IDEMPOTENCY_UNKNOWN",
  "QUEUE_FULL",
  "RATE_LIMITED",
  "LIMITED",
  "SANDBOX_UNAVAILABLE",
  "INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Codes a caller may simply try again later. */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "SESSION_BUSY",
  "SESSION_NOT_READY",
  "TIMEOUT",
  "LIMIT_REACHED",
  "TURN_FAILED",
  "NODE_UNREACHABLE",
  "QUEUE_FULL",
  "RATE_LIMITED",
  "LIMITED",
]);

const DEFAULT_SUGGESTION: Record<ErrorCode, string> = {
  INVALID_ARGUMENT: "Check the arguments against the tool's input schema.",
  UNSUPPORTED_OPTION: "Use the backend (or Claude Code version) the message names, or leave the option out.",
  SESSION_NOT_FOUND: "Call list_sessions to see the known session ids.",
  SESSION_BUSY: "Call wait_for_completion first, or pass queue: true to queue the message.",
  SESSION_NOT_READY: "Wait for the session to become ready (wait_for_completion), then try again.",
  SESSION_DEAD: "Call resume_session to bring the conversation back in a new process.",
  TIMEOUT: "Try again with a larger timeout_ms, or look at stream_output mode screen to see what the session shows.",
  CANCELLED: "The request was cancelled by the client; nothing else changed.",
  CLAUDE_NOT_FOUND: "Install Claude Code (npm install -g @anthropic-ai/claude-code) or set CLAUDE_PATH to the claude binary.",
  TMUX_NOT_FOUND: 'Install tmux (apt-get install tmux / brew install tmux), or use backend: "pty".',
  DOPPLER_ERROR: "Install the Doppler CLI or set DOPPLER_PATH; check the project, config and DOPPLER_TOKEN.",
  WAKE_FAILED:
    "The session stays hibernated: look at stream_output (mode log) for why its process did not start; kill_session ends it.",
  SANDBOX_UNAVAILABLE:
    "Install what the message names (Debian: apt-get install bubblewrap socat ripgrep), or fix the operator's sandbox setting; nothing was started.",
  PROCESS_ERROR: "Look at stream_output (mode screen or log) for what the process printed.",
  STARTUP_BLOCKED: "Claude Code is showing a first-run screen; see the message for the option that answers it.",
  PERMISSION_DENIED: "This server was not started with the option that allows it.",
  LIMIT_REACHED: "Kill sessions you no longer need (kill_session), or raise the limit in the server's environment.",
  TURN_FAILED:
    "The turn ended in error (details.result is the turn's full result, error says why); send the prompt again, or look at stream_output.",
  NODE_UNREACHABLE:
    "The node did not answer (its link is down or its server stopped); its sessions keep running there. Try again once list_sessions shows the node reachable.",
  ALREADY_EXISTS:
    "Use another session_id, call start_session again with the same options and no prompt (that is the existing session), " +
    "send_message to give it a prompt, or resume_session to bring it back.",
  IDEMPOTENCY_MISMATCH:
    "An idempotency_key names one call: send the same arguments again to get its result, or use a new key for a new call.",
  IDEMPOTENCY_UNKNOWN:
    "The server that ran the first call with this key ended before it finished: the work may have happened. Look at " +
    "the session (list_sessions, stream_output), then use a new idempotency_key to run it again.",
  QUEUE_FULL:
    "The session holds as many queued prompts as the server allows (CLAUDE_SESSIONS_MAX_QUEUE): wait for its turns " +
    "to end (wait_for_completion), then send again.",
  RATE_LIMITED: "Too many prompts in a short time: try again after details.retry_after_ms.",
  LIMITED:
    "The account hit a usage or rate limit: the session is parked and woken after details.resets_at (the server resends " +
    "the interrupted prompt once); send again after that time, or wait_for_completion.",
  INTERNAL: "This is a bug in claude-sessions; the server log (stderr) has details.",
};

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  suggestion: string;
  details?: Record<string, unknown>;
}

export class SessionError extends Error {
  readonly code: ErrorCode;
  readonly suggestion: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { suggestion?: string; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "SessionError";
    this.code = code;
    this.suggestion = opts.suggestion ?? DEFAULT_SUGGESTION[code];
    this.retryable = RETRYABLE.has(code);
    this.details = opts.details;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message, retryable: this.retryable, suggestion: this.suggestion };
    if (this.details) body.details = this.details;
    return body;
  }
}

/** Anything thrown becomes a SessionError; unknown failures are INTERNAL. */
export function toSessionError(err: unknown): SessionError {
  if (err instanceof SessionError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new SessionError("INTERNAL", message, { cause: err });
}

export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}

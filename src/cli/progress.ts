/**
 * The CLI's progress line while a turn runs: on a terminal (stderr a TTY) one line redrawn in place — the session,
 * its status, the time since the command began and the tokens of the turn so far (read from the transcript's
 * assistant lines, each API message once); nothing at all when stderr is piped, so scripts see plain output.
 * Driven by the service's change events for the status; the token count is re-read once a second.
 */
import { stat } from "node:fs/promises";
import { emptyUsage, readTurnUsage, type Usage } from "../claude/usage.js";
import type { SessionService } from "../sessions/service.js";
import { safeLine } from "../util/terminal-text.js";

export interface Progress {
  /** Hides the line (before printing the answer). Safe to call more than once. */
  stop(): void;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function compact(n: number): string {
  return n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(2)}M`;
}

function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/** The line's text (exported for the unit test). */
export function progressText(o: {
  frame: number;
  session?: string | undefined;
  status?: string | undefined;
  ms: number;
  usage: Usage;
}): string {
  const input = o.usage.input_tokens + o.usage.cache_creation_input_tokens + o.usage.cache_read_input_tokens;
  const tokens = input + o.usage.output_tokens;
  return (
    `${FRAMES[o.frame % FRAMES.length]} ${safeLine(o.session ?? "starting")} ${safeLine(o.status ?? "…")} · ${elapsed(o.ms)} ` +
    `· ${compact(tokens)} tokens (${compact(o.usage.output_tokens)} out)`
  );
}

/**
 * Shows progress for `session` (or, when not known yet — run starts one — the first session that changes).
 * Returns a no-op when `out` is not a terminal.
 */
export function showProgress(svc: SessionService, out: NodeJS.WriteStream, session?: string): Progress {
  if (!out.isTTY) return { stop() {} };
  const t0 = Date.now();
  let id = session;
  let status: string | undefined;
  let transcript: { path: string; from: number } | undefined;
  let usage = emptyUsage();
  let frame = 0;
  let stopped = false;
  const draw = () => {
    if (!stopped) out.write(`\r\x1b[K${progressText({ frame: frame++, session: id, status, ms: Date.now() - t0, usage })}`);
  };
  const unsubscribe = svc.subscribe((c) => {
    if (id === undefined) id = c.session_id;
    if (c.session_id !== id) return;
    status = c.status;
    const path = c.fold.transcript_path;
    if (path && !transcript) {
      const seen = { path, from: 0 };
      transcript = seen;
      // The turn's lines are those written after the command began: a new session's transcript is all of them.
      if (session !== undefined)
        void stat(path).then(
          (s) => (seen.from = s.size),
          () => {},
        );
    }
  });
  const tokens = setInterval(() => {
    if (transcript)
      void readTurnUsage(transcript.path, transcript.from).then(
        (u) => (usage = u.usage),
        () => {},
      );
  }, 1000);
  const redraw = setInterval(draw, 120);
  tokens.unref();
  redraw.unref();
  draw();
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(tokens);
      clearInterval(redraw);
      unsubscribe();
      out.write("\r\x1b[K");
    },
  };
}

/**
 * The CLI commands that start work: start, run, resume (and send's progress). Each is one tool call through callTool
 * — the tools' input schemas, their checks, an audit line with the unix user as actor, the nodes router when nodes
 * are configured — so a command can do nothing a tool could not. Each returns its exit code and writes the answer
 * to stdout; the progress line (progress.ts) goes to stderr on a terminal only.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { App } from "../app.js";
import { SessionError } from "../core/errors.js";
import type { CallContext } from "../core/context.js";
import { callTool, type CallOptions } from "../server/call.js";
import type { Tool } from "../server/tool.js";
import { killSession } from "../server/tools/core/kill-session.js";
import { resetSession } from "../server/tools/reset-session.js";
import { resumeSession } from "../server/tools/core/resume-session.js";
import { runTask } from "../server/tools/core/run-task.js";
import { sendMessage } from "../server/tools/core/send-message.js";
import { startSession } from "../server/tools/core/start-session.js";
import { waitForCompletion } from "../server/tools/core/wait-for-completion.js";
import { safeLine, safeText } from "../util/terminal-text.js";
import { showProgress } from "./progress.js";

export const WORK_COMMANDS = ["start", "run", "resume", "reset", "send"] as const;
export type WorkCommand = (typeof WORK_COMMANDS)[number];

export const WORK_HELP = `  claude-sessions start <cwd> [--prompt TEXT] [--model M] [--permission-mode MODE] [--backend tmux|pty|headless]
                        [--team NAME] [--teammate NAME] [--lead] [--node NAME] [--worktree] [--sandbox|--no-sandbox]
                        [--wait] [--json]
                                  start a session (as start_session); --wait waits for the prompt's reply;
                                  --lead: the team's lead (its member tools may start and end teammates);
                                  --sandbox / --no-sandbox: in the sandbox or not (default: CLAUDE_SESSIONS_SANDBOX)
  claude-sessions run <cwd> <prompt…> [--model M] [--backend B] [--node NAME] [--worktree] [--sandbox|--no-sandbox]
                        [--keep] [--timeout MS]
                                  one answer (as run_task): prints it and exits 0; the session ends unless --keep
  claude-sessions resume <id> [--message TEXT] [--fork] [--wait] [--json]
                                  bring an ended session back (as resume_session)
  claude-sessions reset <id>      a fresh conversation in the same session (as reset_session; the old one stays resumable)
  claude-sessions send <id> <message…>   send a prompt and print the reply`;

export interface WorkEnv {
  app: App;
  actor: string;
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
}

type Options = Record<string, { type: "string" | "boolean" }>;

function parse(
  args: string[],
  options: Options,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const r = parseArgs({ args, options: { ...options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
    return { values: r.values as Record<string, string | boolean | undefined>, positionals: r.positionals };
  } catch (e) {
    throw new SessionError("INVALID_ARGUMENT", e instanceof Error ? e.message : String(e), {
      suggestion: "claude-sessions --help lists each command's options.",
    });
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function positiveInt(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new SessionError("INVALID_ARGUMENT", `${name} must be a positive integer (got ${JSON.stringify(v)})`);
  return n;
}

/** Drops the keys left undefined (the schemas are strict about shape, not about absent keys, but the audit is neater). */
function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** callTool with the nodes router when nodes are configured. */
async function call<R>(w: WorkEnv, tool: Tool<R>, raw: unknown, ctx: CallContext = {}): Promise<R> {
  const o: CallOptions = {};
  if (w.app.nodes.links.size) {
    w.app.nodes.start();
    o.router = w.app.nodes;
  }
  return callTool(w.app.sessions, tool, raw, { ...ctx, actor: w.actor }, o);
}

/**
 * A pty or headless session lives inside the process that started it, and this command ends: refuse before
 * starting one (a tmux session outlives the command; remote nodes keep theirs).
 */
function mustOutlive(w: WorkEnv, backend: string | undefined, node: string | undefined, verb: string): void {
  if (node !== undefined && node !== "local") return;
  const kind = (backend ?? w.app.cfg.defaultBackend ?? "tmux") as keyof App["hosts"];
  const b = w.app.hosts[kind];
  if (b && !b.survivesRestart) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `a ${kind} session lives inside the process that ${verb}s it, and this command exits when it is done.`,
      {
        suggestion:
          "Use --backend tmux (it outlives the command), `claude-sessions run` for one answer, or an MCP client of `claude-sessions serve`.",
      },
    );
  }
}

/** Every line the work commands print: control and invisible characters escaped (util/terminal-text.ts). */
function line(s: NodeJS.WriteStream, text: string): void {
  s.write(safeText(text) + "\n");
}

/** Waits for the turn of `session` with the progress line; prints the reply. 0 when the turn completed. */
async function waitAndPrint(w: WorkEnv, session: string, timeoutMs: number): Promise<number> {
  const p = showProgress(w.app.sessions, w.err, session);
  try {
    const r = await call(w, waitForCompletion, { session_id: session, timeout_ms: timeoutMs });
    p.stop();
    return turnResult(w, session, r);
  } finally {
    p.stop();
  }
}

interface TurnLike {
  response?: string | undefined;
  last_response?: string | undefined;
  final_state: string;
  turn_outcome?: string | undefined;
  error?: string | undefined;
  timed_out?: boolean | undefined;
  pending_permission?: { tool_name: string } | undefined;
  blocked?: { kind: string; text: string } | undefined;
}

/** Prints the turn's reply (0), or why there is none on stderr (1). */
function turnResult(w: WorkEnv, session: string, r: TurnLike): number {
  const reply = r.response ?? r.last_response;
  if (r.turn_outcome === "completed" || (r.turn_outcome === undefined && reply !== undefined && r.final_state === "ready")) {
    line(w.out, reply ?? "");
    return 0;
  }
  const why = r.timed_out
    ? `TIMEOUT: the turn did not end in time (the session is ${r.final_state})`
    : r.pending_permission
      ? `SESSION_BUSY: the session waits for a permission answer (${r.pending_permission.tool_name})`
      : r.blocked
        ? `SESSION_BUSY: the session is blocked on a ${r.blocked.kind} screen: ${r.blocked.text}`
        : `TURN_FAILED: the turn ${r.turn_outcome ?? "did not complete"}${r.error ? `: ${r.error}` : ""} (the session is ${r.final_state})`;
  line(w.err, `claude-sessions: ${why}`);
  line(w.err, `session ${session}: claude-sessions attach ${session}, tail ${session} or resume ${session}`);
  return 1;
}

function printStarted(
  w: WorkEnv,
  r: {
    session_id: string;
    status: string;
    backend?: string | undefined;
    cwd?: string | undefined;
    attach_command?: string | undefined;
    worktree?: { path: string; branch: string } | undefined;
    node?: string | undefined;
    warnings?: string[] | undefined;
  },
  json: boolean,
  verb: string,
): void {
  if (json) return line(w.out, JSON.stringify(r, null, 2));
  const fields = [r.session_id, r.status, r.backend ?? "", ...(r.node ? [r.node] : []), r.worktree?.path ?? r.cwd ?? ""];
  line(w.out, fields.map(safeLine).join("\t"));
  if (w.err.isTTY) {
    line(
      w.err,
      safeLine(`${verb} ${r.session_id}${r.worktree ? ` in worktree ${r.worktree.path} (branch ${r.worktree.branch})` : ""}`),
    );
    if (r.attach_command) line(w.err, `attach: ${safeLine(r.attach_command)}`);
  }
  for (const warning of r.warnings ?? []) line(w.err, `warning: ${safeLine(warning)}`);
}

/** --sandbox / --no-sandbox: the start's `sandbox` (neither: the server's default); both is a usage error. */
function sandboxFlag(v: {
  sandbox?: boolean | string | undefined;
  "no-sandbox"?: boolean | string | undefined;
}): boolean | undefined {
  if (v.sandbox === true && v["no-sandbox"] === true)
    throw new SessionError("INVALID_ARGUMENT", "--sandbox and --no-sandbox contradict each other; give one.");
  return v.sandbox === true ? true : v["no-sandbox"] === true ? false : undefined;
}

async function startCmd(w: WorkEnv, args: string[]): Promise<number> {
  const { values: v, positionals } = parse(args, {
    prompt: { type: "string" },
    model: { type: "string" },
    "permission-mode": { type: "string" },
    backend: { type: "string" },
    team: { type: "string" },
    teammate: { type: "string" },
    lead: { type: "boolean" },
    node: { type: "string" },
    worktree: { type: "boolean" },
    sandbox: { type: "boolean" },
    "no-sandbox": { type: "boolean" },
    wait: { type: "boolean" },
    timeout: { type: "string" },
  });
  if (positionals.length !== 1)
    throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions start <cwd> [--prompt TEXT] [options]", {
      suggestion: 'Quote a prompt with spaces: --prompt "fix the tests".',
    });
  if (v.wait && v.prompt === undefined)
    throw new SessionError("INVALID_ARGUMENT", "--wait needs --prompt (there is no turn to wait for)");
  mustOutlive(w, str(v.backend), str(v.node), "start");
  const r = await call(
    w,
    startSession,
    defined({
      cwd: resolve(positionals[0]!),
      prompt: str(v.prompt),
      model: str(v.model),
      permission_mode: str(v["permission-mode"]),
      backend: str(v.backend),
      team_name: str(v.team),
      teammate_name: str(v.teammate),
      team_lead: v.lead ? true : undefined,
      node: str(v.node),
      worktree: v.worktree ? true : undefined,
      sandbox: sandboxFlag(v),
    }),
  );
  printStarted(w, r, v.json === true, "started");
  return v.wait ? waitAndPrint(w, r.session_id, positiveInt(str(v.timeout), "--timeout") ?? 600_000) : 0;
}

async function runCmd(w: WorkEnv, args: string[]): Promise<number> {
  const { values: v, positionals } = parse(args, {
    model: { type: "string" },
    "permission-mode": { type: "string" },
    backend: { type: "string" },
    team: { type: "string" },
    node: { type: "string" },
    worktree: { type: "boolean" },
    sandbox: { type: "boolean" },
    "no-sandbox": { type: "boolean" },
    keep: { type: "boolean" },
    timeout: { type: "string" },
  });
  const [cwd, ...words] = positionals;
  if (!cwd || !words.length) throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions run <cwd> <prompt…>");
  const p = showProgress(w.app.sessions, w.err);
  // Ended afterwards with a kill_session of its own (so the command does not exit while it is still ending),
  // also when the turn failed: run_task then throws TURN_FAILED with the turn's result (and the session id) in details.
  const end = async (id: string) => {
    if (!v.keep)
      await call(w, killSession, { session_id: id }).catch((e: unknown) =>
        line(w.err, `claude-sessions: ending session ${id}: ${String(e)}`),
      );
    else if (w.err.isTTY) line(w.err, `session ${id} kept: claude-sessions send ${id} <message…>`);
  };
  let r;
  try {
    r = await call(
      w,
      runTask,
      defined({
        cwd: resolve(cwd),
        prompt: words.join(" "),
        model: str(v.model),
        permission_mode: str(v["permission-mode"]),
        backend: str(v.backend),
        team_name: str(v.team),
        node: str(v.node),
        worktree: v.worktree ? true : undefined,
        sandbox: sandboxFlag(v),
        timeout_ms: positiveInt(str(v.timeout), "--timeout"),
        keep_session: true,
        // What it prints (and --json) carries the turn's exact usage and cost.
        wait_for_usage: true,
      }),
      { progress: () => {} },
    );
  } catch (e) {
    p.stop();
    const failed =
      e instanceof SessionError ? (e.details?.result as { session_id?: unknown } | undefined)?.session_id : undefined;
    if (typeof failed === "string") await end(failed);
    throw e;
  } finally {
    p.stop();
  }
  if (v.json) line(w.out, JSON.stringify(r, null, 2));
  const code = v.json ? (r.turn_outcome === "completed" ? 0 : 1) : turnResult(w, r.session_id, r);
  await end(r.session_id);
  return code;
}

async function resumeCmd(w: WorkEnv, args: string[]): Promise<number> {
  const { values: v, positionals } = parse(args, {
    message: { type: "string" },
    fork: { type: "boolean" },
    wait: { type: "boolean" },
    timeout: { type: "string" },
  });
  if (positionals.length !== 1)
    throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions resume <id> [--message TEXT] [--fork] [--wait]");
  if (v.wait && v.message === undefined)
    throw new SessionError("INVALID_ARGUMENT", "--wait needs --message (there is no turn to wait for)");
  const rec = await w.app.store.get(positionals[0]!);
  if (rec) mustOutlive(w, rec.backend, undefined, "resume");
  const r = await call(
    w,
    resumeSession,
    defined({ session_id: positionals[0], message: str(v.message), fork: v.fork ? true : undefined }),
  );
  if (r.status === "not_found")
    throw new SessionError("SESSION_NOT_FOUND", `no session with id ${JSON.stringify(positionals[0])}; nothing was started.`, {
      suggestion: "claude-sessions ls --all lists the sessions that can be resumed.",
    });
  printStarted(w, r, v.json === true, r.forked ? "forked" : "resumed");
  return v.wait ? waitAndPrint(w, r.session_id, positiveInt(str(v.timeout), "--timeout") ?? 600_000) : 0;
}

async function resetCmd(w: WorkEnv, args: string[]): Promise<number> {
  const { values: v, positionals } = parse(args, {});
  if (positionals.length !== 1) throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions reset <id>");
  const r = await call(w, resetSession, { session_id: positionals[0] });
  if (v.json) line(w.out, JSON.stringify(r, null, 2));
  else line(w.out, [r.session_id, r.status, r.claude_session_id, `(was ${r.old_claude_session_id})`].map(safeLine).join("\t"));
  return 0;
}

async function sendCmd(w: WorkEnv, args: string[]): Promise<number> {
  const [id, ...rest] = args;
  if (!id || !rest.length) throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions send <id> <message…>");
  const p = showProgress(w.app.sessions, w.err, id);
  try {
    const res = await call(w, sendMessage, { session_id: id, message: rest.join(" "), timeout_ms: 600_000 });
    p.stop();
    line(w.out, res.response ?? `(no reply; the session is ${res.final_state})`);
    return 0;
  } finally {
    p.stop();
  }
}

export function isWorkCommand(cmd: string): cmd is WorkCommand {
  return (WORK_COMMANDS as readonly string[]).includes(cmd);
}

export function runWorkCommand(cmd: WorkCommand, args: string[], w: WorkEnv): Promise<number> {
  switch (cmd) {
    case "start":
      return startCmd(w, args);
    case "run":
      return runCmd(w, args);
    case "resume":
      return resumeCmd(w, args);
    case "reset":
      return resetCmd(w, args);
    case "send":
      return sendCmd(w, args);
  }
}

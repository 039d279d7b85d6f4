/**
 * Claude Code's own background sessions (`claude --bg`), through the CLI's public commands only: `claude agents
 * --json --all` lists them, `claude --bg --resume <session> -- <prompt>` continues a stopped one, and `claude attach
 * <id>` opens a running one (sessions/native.ts types into it in a terminal of this server). Nothing here reads the
 * CLI's private files (~/.claude/jobs, ~/.claude/daemon, its control sockets). Measured on 2.1.197, 2.1.330, 2.1.331, 2.1.332.
 */
import { run } from "../util/proc/exec.js";

/** A background session's short id as `claude --bg` prints it ("1f1b096b"): starts with a letter or digit, so never an option. */
export const NATIVE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** A conversation id (the transcript's name). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One entry of `claude agents --json`, in this server's field names. Only what the CLI printed is set. */
export interface NativeSession {
  /** The short id `claude attach/logs/stop` take (background sessions only; interactive ones have none). */
  id?: string;
  kind: "background" | "interactive";
  /** The job: working, blocked, done, failed, stopped (background sessions). */
  state?: string;
  /** The process: idle, busy, waiting (2.1.330 and later, while it runs). */
  status?: string;
  waiting_for?: string;
  pid?: number;
  cwd?: string;
  claude_session_id?: string;
  name?: string;
  started_at?: string;
}

const str = (v: unknown, max = 4096): string | undefined =>
  typeof v === "string" && v.length > 0 && v.length <= max && !v.includes("\0") ? v : undefined;

/**
 * `claude agents --json` output, read defensively: anything that is not an array of objects is an error; an entry
 * with a malformed field loses that field; a background entry without a valid id, or an entry of another kind, is
 * dropped.
 */
export function parseAgentsJson(stdout: string): NativeSession[] {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch {
    throw new Error(`claude agents --json printed no JSON: ${JSON.stringify(stdout.slice(0, 200))}`);
  }
  if (!Array.isArray(v)) throw new Error("claude agents --json did not print a JSON array");
  const out: NativeSession[] = [];
  for (const e of v) {
    if (!e || typeof e !== "object" || Array.isArray(e)) continue;
    const o = e as Record<string, unknown>;
    if (o.kind !== "background" && o.kind !== "interactive") continue;
    const s: NativeSession = { kind: o.kind };
    const id = str(o.id, 64);
    if (id && NATIVE_ID.test(id)) s.id = id;
    else if (o.kind === "background") continue;
    for (const [from, to] of [
      ["state", "state"],
      ["status", "status"],
      ["waitingFor", "waiting_for"],
    ] as const) {
      const x = str(o[from], 200);
      if (x) s[to] = x;
    }
    if (typeof o.pid === "number" && Number.isInteger(o.pid) && o.pid > 0) s.pid = o.pid;
    const cwd = str(o.cwd);
    if (cwd) s.cwd = cwd;
    const sid = str(o.sessionId, 64);
    if (sid && UUID.test(sid)) s.claude_session_id = sid;
    const name = str(o.name, 1000);
    if (name) s.name = name;
    if (typeof o.startedAt === "number" && Number.isFinite(o.startedAt) && o.startedAt > 0) {
      const d = new Date(o.startedAt);
      if (!Number.isNaN(d.getTime())) s.started_at = d.toISOString();
    }
    out.push(s);
  }
  return out;
}

/** Job states of a session whose conversation has ended (its process is gone, or on its way out). */
const ENDED = new Set(["stopped", "done", "failed"]);

/** The session is running (the CLI prints a pid only for a live process; 2.1.197 never does, then the job state says). */
export function isRunning(s: NativeSession): boolean {
  if (s.pid !== undefined) return true;
  return s.status !== undefined || s.state === "working" || s.state === "blocked";
}

/** Just stopped: the job says it ended but the CLI still lists its process (for a moment after `claude stop`). */
export function isExiting(s: NativeSession): boolean {
  return s.pid !== undefined && s.state !== undefined && ENDED.has(s.state);
}

export interface CliRun {
  bin: string;
  env: Record<string, string>;
  cwd?: string;
}

const LIST_TIMEOUT_MS = 20_000;
const RESUME_TIMEOUT_MS = 60_000;

/** The CLI's own error line, short (stderr first: that is where it writes them). */
function said(r: { stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null }): string {
  const text = (r.stderr.trim() || r.stdout.trim()).split("\n").slice(-3).join(" ").slice(0, 300);
  return text || (r.signal ? `killed by ${r.signal}` : `exit status ${r.code}`);
}

/** Every native session the CLI knows (running and ended: `--all`). Throws with the CLI's own words when it cannot. */
export async function listNative(c: CliRun): Promise<NativeSession[]> {
  const r = await run(c.bin, ["agents", "--json", "--all"], {
    env: c.env,
    timeoutMs: LIST_TIMEOUT_MS,
    ...(c.cwd ? { cwd: c.cwd } : {}),
  });
  if (r.code !== 0)
    throw new Error(`claude agents --json failed (${said(r)}); this Claude Code may have no background sessions (claude --bg)`);
  return parseAgentsJson(r.stdout);
}

/** The id in `claude --bg`'s "backgrounded · <id>" line. */
export function backgroundedId(output: string): string | undefined {
  const id = /backgrounded\s*·\s*([A-Za-z0-9][A-Za-z0-9_-]{0,63})/.exec(output)?.[1];
  return id && NATIVE_ID.test(id) ? id : undefined;
}

/**
 * Continues a stopped background session with a prompt: `claude --bg --permission-mode <mode> --resume <session> --
 * <prompt>`. Without options 2.1.330 and later keep its id and saved options (its saved mode too); given the mode,
 * they carry the conversation into a new background session with a new id, as 2.1.197 always does (measured on
 * 2.1.330, 2026-11-27). The prompt goes after `--`, so one that starts with "-" is text, not an option.
 */
export async function resumeInBackground(
  c: CliRun,
  claudeSessionId: string,
  prompt: string,
  permissionMode: string,
): Promise<{ id: string | undefined; output: string }> {
  const r = await run(c.bin, resumeArgs(claudeSessionId, prompt, permissionMode), {
    env: c.env,
    timeoutMs: RESUME_TIMEOUT_MS,
    ...(c.cwd ? { cwd: c.cwd } : {}),
  });
  if (r.code !== 0) throw new Error(`claude --bg --resume failed (${said(r)})`);
  const output = r.stdout + r.stderr;
  return { id: backgroundedId(output), output };
}

/**
 * argv of `claude --bg --permission-mode <mode> --resume <conversation> -- <prompt>`: the mode given explicitly (the
 * server's gates chose it), so the prompt never runs in a mode the session saved that this server would refuse.
 */
export function resumeArgs(claudeSessionId: string, prompt: string, permissionMode: string): string[] {
  if (!UUID.test(claudeSessionId)) throw new Error(`not a conversation id: ${JSON.stringify(claudeSessionId)}`);
  if (!/^[a-zA-Z]+$/.test(permissionMode)) throw new Error(`not a permission mode: ${JSON.stringify(permissionMode)}`);
  return ["--bg", "--permission-mode", permissionMode, "--resume", claudeSessionId, "--", prompt];
}

/** argv of `claude attach <id>` (the id checked: it is an argument, never an option). */
export function attachArgs(id: string): string[] {
  if (!NATIVE_ID.test(id)) throw new Error(`not a background session id: ${JSON.stringify(id)}`);
  return ["attach", id];
}

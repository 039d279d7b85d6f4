/**
 * The audit log: one JSON line per call that changes something, in <state>/audit.jsonl (0600): time, tool (or the
 * server's own action), session, who asked (`actor`: `mcp:<transport>:<client>`, `web:<sign-in>`, `cli:<user>`,
 * `server:<reason>`, `member:<session id>`), the MCP client's name, outcome, error code and duration. Never arguments, message text or
 * results (so never a secret). Rotated by size to audit.jsonl.1. Lines are appended in call order by one
 * chain per process; each line is one write, so servers sharing the state directory do not interleave within one.
 */
import { appendFile, readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../util/log.js";

export interface AuditLine {
  time: string;
  tool: string;
  session_id?: string;
  /** Who asked: `mcp:<stdio|http>:<client name>`, `web:<sign-in id prefix>`, `cli:<unix user>`, `server:<reason>` or `member:<session id>`. */
  actor: string;
  /** The MCP client's name from its handshake (MCP calls only). */
  client?: string;
  outcome: "ok" | "error";
  error_code?: string;
  duration_ms: number;
}

export function auditPath(stateDir: string): string {
  return join(stateDir, "audit.jsonl");
}

export class AuditLog {
  private chain: Promise<void> = Promise.resolve();
  private readonly file: string;

  constructor(
    stateDir: string,
    private readonly maxBytes: number,
    private readonly log: Logger,
  ) {
    this.file = auditPath(stateDir);
  }

  /**
   * The one way src/ writes an audit line: what was done, by whom, since when, and its error code if it failed
   * (server/call.ts for every call of a tool, sessions/audit.ts and the queue for the server's own actions).
   */
  record(e: {
    tool: string;
    session_id?: string | undefined;
    actor: string;
    client?: string | undefined;
    since: number;
    code?: string | undefined;
  }): Promise<void> {
    return this.append({
      time: new Date(e.since).toISOString(),
      tool: e.tool,
      ...(e.session_id ? { session_id: e.session_id } : {}),
      actor: e.actor,
      ...(e.client ? { client: e.client } : {}),
      outcome: e.code ? "error" : "ok",
      ...(e.code ? { error_code: e.code } : {}),
      duration_ms: Date.now() - e.since,
    });
  }

  append(line: AuditLine): Promise<void> {
    this.chain = this.chain
      .then(() => this.write(line))
      .catch((e: unknown) => this.log.warn(`audit log not written: ${String(e)}`));
    return this.chain;
  }

  /** Resolves when every line appended so far is written (before a process exits). */
  flushed(): Promise<void> {
    return this.chain;
  }

  private async write(line: AuditLine): Promise<void> {
    const size = (await stat(this.file).catch(() => undefined))?.size ?? 0;
    if (size >= this.maxBytes) await rename(this.file, `${this.file}.1`).catch(() => {});
    await appendFile(this.file, JSON.stringify(line) + "\n", { mode: 0o600 });
  }
}

/** The session a call was about: its argument, or the id a start returned. Only a well-formed id is kept. */
export function sessionOf(args: unknown, result: unknown): string | undefined {
  for (const v of [args, result]) {
    const id = typeof v === "object" && v !== null && "session_id" in v ? v.session_id : undefined;
    if (typeof id === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(id)) return id;
  }
  return undefined;
}

/** Lines of the audit log (rotated file first), from `since` on when given. Torn or foreign lines are skipped. */
export async function readAudit(stateDir: string, since?: Date): Promise<AuditLine[]> {
  const out: AuditLine[] = [];
  for (const f of [`${auditPath(stateDir)}.1`, auditPath(stateDir)]) {
    const text = await readFile(f, "utf8").catch(() => "");
    for (const l of text.split("\n")) {
      if (!l.trim()) continue;
      try {
        const a = JSON.parse(l) as AuditLine;
        if (typeof a.time !== "string" || typeof a.tool !== "string") continue;
        if (since && Date.parse(a.time) < since.getTime()) continue;
        out.push(a);
      } catch {
        /* a torn line */
      }
    }
  }
  return out;
}

/** "--since" values: an ISO date, or a duration back from now (90s, 15m, 2h, 7d). */
export function parseSince(v: string, now = Date.now()): Date | undefined {
  const m = /^(\d+)([smhd])$/.exec(v);
  if (m) return new Date(now - Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"]);
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t) : undefined;
}

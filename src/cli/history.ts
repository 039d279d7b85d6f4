/**
 * CLI commands over the history: `history`, `search <words…>`, `show <claude_session_id>`, and
 * `cost [--since] [--by session|cwd|model|day]`. Each returns the text to print.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { totalTokens, type Usage } from "../claude/usage.js";
import { PRICES_AS_OF, unpricedNote } from "../pricing.js";
import { SessionError } from "../core/errors.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ExecutionLog } from "../history/executions.js";
import { History, type IndexState } from "../history/history.js";

const groupBy = z.enum(["session", "cwd", "model", "day"]);

export const HISTORY_COMMANDS = ["history", "search", "show", "cost"] as const;
export type HistoryCommand = (typeof HISTORY_COMMANDS)[number];

export const HISTORY_HELP = `  claude-sessions history [--cwd DIR] [--since DATE] [--until DATE] [--limit N]
                                  conversations in Claude Code's transcripts, newest first
  claude-sessions search <words…> [--cwd DIR] [--since DATE] [--limit N]
                                  full-text search ("quoted phrases"; Japanese and Chinese too)
  claude-sessions show <claude_session_id> [--end] [--limit N]
                                  one conversation's messages
  claude-sessions cost [--since DATE] [--until DATE] [--by session|cwd|model|day] [--cwd DIR]
                                  token usage and cost (prices of ${PRICES_AS_OF})
  claude-sessions cost --sessions [--limit N]
                                  this server's sessions: turns, average and p95 turn time, error rate, tokens, cost`;

const common = {
  cwd: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  limit: { type: "string" },
} as const;

function limitOf(v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new SessionError("INVALID_ARGUMENT", `--limit must be a positive integer (got ${JSON.stringify(v)})`);
  return n;
}

const day = (t: string | null) => (t ? t.slice(0, 16).replace("T", " ") : "—".padEnd(16));
const money = (c: number | null) => (c === null ? "     n/a" : `$${c.toFixed(c < 10 ? 4 : 2)}`.padStart(8));
const one = (s: string | null, n: number) => {
  const t = (s ?? "").replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};
const tokens = (u: Usage) => {
  const n = totalTokens(u);
  return (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n)).padStart(7);
};

function footer(st: IndexState): string {
  return st.indexing ? `\n(indexing: the transcript index is still being built; results may be incomplete)` : "";
}

export function historyCommand(h: History, argv: string[]): string {
  const { values } = parseArgs({ args: argv, options: common, allowPositionals: false });
  const r = h.listConversations({ ...values, limit: limitOf(values.limit, 30) });
  if (r.conversations.length === 0) return `no conversations${footer(r)}`;
  const lines = r.conversations.map(
    (c) =>
      `${day(c.last_activity)}  ${c.claude_session_id}  ${String(c.turns).padStart(4)} turns ${money(c.cost_usd)}  ${one(c.title, 60)}\n` +
      `${"".padEnd(18)}${c.cwd ?? c.project}`,
  );
  return `${lines.join("\n")}\n${r.conversations.length} of ${r.total}${footer(r)}`;
}

export function searchCommand(h: History, argv: string[]): string {
  const { values, positionals } = parseArgs({ args: argv, options: common, allowPositionals: true });
  const query = positionals.join(" ");
  if (!query.trim())
    throw new SessionError("INVALID_ARGUMENT", "search needs words to look for", {
      suggestion: "claude-sessions search database migration",
    });
  const r = h.searchConversations({ ...values, query, limit: limitOf(values.limit, 10) });
  if (r.results.length === 0) return `no matches for ${query}${footer(r)}`;
  const lines = r.results.map(
    (x) =>
      `${x.claude_session_id}  ${day(x.item.time)}  ${one(x.title, 50)}\n  ${x.cwd ?? ""}\n  ${x.item.role}: ${x.snippet}\n ` +
      ` resume: resume_session {claude_session_id: "${x.claude_session_id}", cwd: ${JSON.stringify(x.cwd)}}`,
  );
  return `${lines.join("\n\n")}${r.more_matches ? "\n(more matches exist; narrow the query or add --since/--cwd)" : ""}${footer(r)}`;
}

export function showCommand(h: History, argv: string[]): string {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { limit: { type: "string" }, end: { type: "boolean" } },
    allowPositionals: true,
  });
  const id = positionals[0];
  if (!id)
    throw new SessionError("INVALID_ARGUMENT", "show needs a claude_session_id", {
      suggestion: "claude-sessions history lists them.",
    });
  const p = h.getConversation({
    claude_session_id: id,
    limit: limitOf(values.limit, 200),
    from: values.end ? "end" : "start",
    max_chars: 100_000,
  });
  const c = p.conversation;
  const head =
    `${c.title ?? "(untitled)"}\n${c.cwd ?? c.project}  ${day(c.first_activity)} → ${day(c.last_activity)}  ${c.turns} ` +
    `turns  ${tokens(c.usage).trim()} tokens  ${money(c.cost_usd).trim()}`;
  const body = p.items.map((it) => {
    const tools = it.tools?.map((t) => `  [${t.name}] ${t.input}`).join("\n");
    return `── ${it.role} ${day(it.time)}\n${it.text}${tools ? `\n${tools}` : ""}`;
  });
  const more = [
    p.has_more_before ? "earlier messages not shown (raise --limit)" : "",
    p.has_more_after ? "later messages not shown (--end, or raise --limit)" : "",
  ].filter(Boolean);
  return `${head}\n\n${body.join("\n\n")}${more.length ? `\n\n(${more.join("; ")})` : ""}${footer(p)}`;
}

/** `cost --sessions`: this server's sessions from its execution history: turns, average and p95 turn time, error rate, tokens, cost. */
export function sessionsCostCommand(stateDir: string, argv: string[]): string {
  const { values } = parseArgs({
    args: argv,
    options: { sessions: { type: "boolean" }, limit: { type: "string" } },
    allowPositionals: false,
  });
  const limit = limitOf(values.limit, 50);
  if (!existsSync(join(stateDir, "executions.sqlite"))) return "no execution history yet (this server has run no turn)";
  const log = new ExecutionLog(stateDir, null);
  try {
    const rows = [...log.metrics()].sort((a, b) => (b[1].cost_usd ?? -1) - (a[1].cost_usd ?? -1) || a[0].localeCompare(b[0]));
    const secs = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)}s`).padStart(8);
    const lines = [
      `${"session".padEnd(24)} ${"turns".padStart(6)} ${"avg".padStart(8)} ${"p95".padStart(8)} ${"errors".padStart(7)} ` +
        `${"tokens".padStart(7)} ${"cost".padStart(8)}`,
    ];
    for (const [id, m] of rows.slice(0, limit)) {
      const err = m.error_rate === null ? "—" : `${Math.round(m.error_rate * 100)}%`;
      lines.push(
        `${one(id, 24).padEnd(24)} ${String(m.turns).padStart(6)} ${secs(m.avg_turn_ms)} ${secs(m.p95_turn_ms)} ${err.padStart(7)} ` +
          `${tokens(m.usage)} ${money(m.cost_usd)}${m.cost_complete ? "" : " (lower bound: a model without a price)"}`,
      );
    }
    if (rows.length > limit) lines.push(`… ${rows.length - limit} more (--limit)`);
    lines.push("turns recorded by this server (failed starts and deaths included); times from prompt to turn end");
    return lines.join("\n");
  } finally {
    log.close();
  }
}

export function costCommand(h: History, argv: string[]): string {
  const { values } = parseArgs({ args: argv, options: { ...common, by: { type: "string" } }, allowPositionals: false });
  const parsed = groupBy.safeParse(values.by ?? "session");
  if (!parsed.success)
    throw new SessionError("INVALID_ARGUMENT", `--by must be session, cwd, model or day (got ${JSON.stringify(values.by)})`);
  const by = parsed.data;
  const r = h.usage({
    by,
    ...(values.since ? { since: values.since } : {}),
    ...(values.until ? { until: values.until } : {}),
    ...(values.cwd ? { cwd: values.cwd } : {}),
  });
  const limit = limitOf(values.limit, 50);
  const row = (key: string, m: number, u: Usage, c: number | null) =>
    `${one(key, 48).padEnd(48)} ${String(m).padStart(7)} ${tokens(u)} ${String(u.output_tokens).padStart(10)} ${money(c)}`;
  const lines = [`${by.padEnd(48)} ${"msgs".padStart(7)} ${"tokens".padStart(7)} ${"output".padStart(10)} ${"cost".padStart(8)}`];
  for (const x of r.rows.slice(0, limit)) lines.push(row(x.key, x.messages, x.usage, x.cost_usd));
  if (r.rows.length > limit) lines.push(`… ${r.rows.length - limit} more (--limit)`);
  lines.push(row("total", r.total.messages, r.total.usage, r.total.cost_usd));
  if (r.total.unpriced_models.length) lines.push(`note: ${unpricedNote(r.total.unpriced_models)}`);
  lines.push(`prices as of ${PRICES_AS_OF}; each API message counted once; days are UTC`);
  return lines.join("\n") + footer(r);
}

/**
 * Runs one history command in a CLI process: opens the index, brings it up to date (incremental after the
 * first run), answers, closes.
 */
export async function runHistoryCommand(
  cmd: HistoryCommand,
  argv: string[],
  opts: { stateDir: string; configDir: string },
): Promise<string> {
  // This server's own record needs no transcript index.
  if (cmd === "cost" && argv.includes("--sessions")) return sessionsCostCommand(opts.stateDir, argv);
  const h = new History({ stateDir: opts.stateDir, configDir: opts.configDir, syncOnOpen: false });
  try {
    await h.sync();
    switch (cmd) {
      case "history":
        return historyCommand(h, argv);
      case "search":
        return searchCommand(h, argv);
      case "show":
        return showCommand(h, argv);
      case "cost":
        return costCommand(h, argv);
    }
  } finally {
    await h.close();
  }
}

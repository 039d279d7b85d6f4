/**
 * Usage and cost of tmux and pty sessions, read from Claude's transcripts. When a prompt is delivered the
 * sizes of the conversation's transcript and its sub-agents' are remembered; when the turn ends (the fold's
 * turn_count grows) the turn's lines are read (claude/turn-usage.ts), after a short bounded wait (the assistant
 * line lands 25–80 ms after Stop). Each API message counts once (streamed replies repeat a message id over
 * several lines); sub-agent usage counts. The session's totals live in its record with an offset per file
 * (usage_files) so every byte is counted once, by one server; the turn is recorded in the execution history and
 * the transcript index is told which files grew.
 */
import { dirname, join } from "node:path";
import { existsSync } from "node:fs";
import type { SendOutput } from "../../api/index.js";
import { transcriptPath } from "../../claude/transcript.js";
import { configDirFor } from "../../claude/accounts.js";
import { copiedHistoryEnd, readTurn, sizes, transcriptFiles, type Offsets } from "../../claude/turn-usage.js";
import { addUsage, emptyUsage } from "../../claude/usage.js";
import { isLive } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import { costOfModels } from "../../pricing.js";
import type { SessionRecord } from "../../store/schema.js";
import type { Deps } from "../deps.js";
import { waitForChange } from "../../util/fs/file-change.js";
import type { TurnLedger } from "../session.js";
import { fromRecord, publicUsage } from "./totals.js";

/** How long a turn's end waits for the transcript's lines, at most: without a reply, and with one expected. */
const SETTLE_MAX_MS = 600;
const SETTLE_REPLY_MAX_MS = 3000;
const SETTLE_POLL_MS = 20;
/** Without a reply line: how long the file must have been still before the turn is read as it is. */
const SETTLE_QUIET_MS = 200;

export type CostFields = Pick<SendOutput, "usage" | "model_usage" | "cost_usd" | "cost_complete">;

export interface Begun {
  promptNo: number;
  prompt: string;
  startedAt: string;
  main: string;
  offsets: Offsets;
}

/**
 * The ledger's settings. What it keeps of a session (turns under way and being settled) is the session object's
 * `ledger` (session.ts), dropped with it.
 */
export class Ledger {
  /** `quietMs`: how long a turn without a reply line waits for its transcript to be still (tests shorten it). */
  constructor(readonly quietMs: number = SETTLE_QUIET_MS) {}
}

/** The session's part of the ledger; for a session this process does not follow, one that is kept nowhere. */
function ledgerOf(d: Deps, id: string): TurnLedger {
  return d.registry.session(id)?.ledger ?? { begun: [], settling: new Map() };
}

/** Figures of settled turns not yet in the store, of every followed session (list_sessions waits for these). */
export function recordings(d: Deps): Promise<void>[] {
  const out: Promise<void>[] = [];
  for (const s of d.registry.all()) if (s.ledger.recording) out.push(s.ledger.recording);
  return out;
}

function pathOf(d: Deps, r: SessionRecord, fold?: Folded): string {
  return transcriptPath(
    configDirFor(d.cfg.accountsFile, d.cfg.claudeConfigDir, r.account),
    r.cwd,
    fold?.claude_session_id ?? r.claude_session_id,
  );
}

/** Remembers where the transcripts stood when prompt number `promptNo` was delivered. */
export async function beginTurn(d: Deps, r: SessionRecord, fold: Folded, promptNo: number, prompt: string): Promise<void> {
  const main = pathOf(d, r, fold);
  const offsets = sizes(transcriptFiles(main));
  const l = ledgerOf(d, r.session_id);
  const list = l.begun.filter((b) => b.promptNo < promptNo).slice(-4);
  l.begun = [...list, { promptNo, prompt, startedAt: new Date().toISOString(), main, offsets }];
  // Transcripts never counted (a new session, a fork, an adopted conversation): totals count from here.
  if (Object.keys(offsets).some((f) => r.usage_files?.[f] === undefined)) {
    await d.store.patch(r.session_id, (x) => {
      const files = { ...(x.usage_files ?? {}) };
      for (const [f, o] of Object.entries(offsets)) files[f] ??= o;
      x.usage_files = files;
    });
  }
}

/** The usage of turn number `turn` (which has ended), settled once per process; later calls share it. */
export function settleTurn(d: Deps, id: string, turn: number, fold: Folded): Promise<CostFields> {
  const l = ledgerOf(d, id);
  const turns = l.settling;
  const known = turns.get(turn);
  if (known) return known;
  // One settlement at a time per session: each reads the counted offsets the previous one left.
  const snapshot = { ...fold };
  const run = (l.chain ?? Promise.resolve()).then(() => settle(d, l, id, turn, snapshot));
  // The turn's figures are known once its lines are read; recording them (the store, the execution history) goes
  // on behind the result, and the next settlement (and a budget check) waits for that too.
  const p = run.then(
    (r) => r.fields,
    (e: unknown) => {
      d.log.warn(`${id}: reading the turn's usage failed: ${String(e)}`);
      return {};
    },
  );
  l.chain = run.then(
    (r) => r.recorded,
    () => undefined,
  );
  turns.set(turn, p);
  for (const t of turns.keys()) if (turns.size > 8 && t < turn) turns.delete(t);
  // A settlement that ends after the server stopped following the session writes into an object kept nowhere.
  return p;
}

/**
 * Records a turn that did not end with a Stop: the process died mid-turn (`died`), or a send's wait ended first
 * (`timed_out`: the turn goes on and gets its own record when it ends; `cancelled`). No figures: its lines are
 * counted with the next settled turn.
 */
export function recordUnended(
  d: Deps,
  id: string,
  fold: Folded,
  promptNo: number,
  outcome: "died" | "timed_out" | "cancelled",
  error: string,
): void {
  if (!d.history) return;
  const l = ledgerOf(d, id);
  const list = l.begun;
  const begun = list.find((b) => b.promptNo === promptNo);
  if (outcome === "died") l.begun = list.filter((b) => b.promptNo !== promptNo);
  d.history.recordTurn({
    session_id: id,
    ...(fold.claude_session_id ? { claude_session_id: fold.claude_session_id } : {}),
    prompt: begun?.prompt ?? fold.last_prompt ?? "",
    started_at: begun?.startedAt ?? new Date().toISOString(),
    ended_at: new Date(),
    outcome,
    error,
  });
}

/** Waits for the usage of a turn being settled (so a budget check sees it). */
export async function settled(d: Deps, id: string): Promise<void> {
  await d.registry.session(id)?.ledger.chain;
}

async function settle(
  d: Deps,
  l: TurnLedger,
  id: string,
  turn: number,
  fold: Folded,
): Promise<{ fields: CostFields; recorded: Promise<void> }> {
  const r = await d.store.get(id);
  if (!r) return { fields: {}, recorded: Promise.resolve() };
  const list = l.begun;
  const begun = list.find((b) => b.promptNo === turn);
  const main = begun?.main ?? pathOf(d, r, fold);
  const counted: Offsets = { ...(r.usage_files ?? {}) };
  // Without a remembered delivery (a prompt typed in the pane, another server's): from where counting stands.
  const turnFrom: Offsets = begun?.offsets ?? { ...counted };
  // A fork's first count: the history Claude copied from the parent is the parent's usage, neither the turn's nor the fork's.
  const forkedAt = r.forked_from && !counted[main] ? r.forked_from.at : undefined;
  const readNow = async (fs: string[]) => {
    if (!forkedAt) return readTurn(main, fs, turnFrom, counted, fold.turn_prompt_id);
    const parent = r.forked_from?.claude_session_id ? join(dirname(main), `${r.forked_from.claude_session_id}.jsonl`) : undefined;
    const skip = await copiedHistoryEnd(main, forkedAt, parent);
    return readTurn(
      main,
      fs,
      { ...turnFrom, [main]: Math.max(turnFrom[main] ?? 0, skip) },
      { ...counted, [main]: Math.max(counted[main] ?? 0, skip) },
      fold.turn_prompt_id,
    );
  };
  // The last assistant line lands shortly after Stop (25–80 ms): read until a reply is there and the file is still.
  const t0 = Date.now();
  let files = transcriptFiles(main);
  let read = await readNow(files);
  let grewAt = t0;
  // A completed turn with a reply has an assistant line to wait for (Claude Code writes its transcript behind
  // the hooks, later still on a loaded machine); any other turn, or no transcript, is read once the files are quiet.
  // Looked at again on every pass: on a loaded machine the CLI may create the transcript after the first Stop.
  // A process that has ended writes nothing more: its files are read until they are still, not for a reply that
  // will not come (a session killed right after its answer kept this loop reading every 20 ms for 3 s).
  const ended = () => {
    const now = d.registry.followed(id)?.fold.status;
    return now === undefined || !isLive(now);
  };
  const replied = fold.last_turn === "completed" && Boolean(fold.last_response);
  const expecting = () => replied && existsSync(main) && !ended();
  let expectReply = expecting();
  for (; Date.now() - t0 < (expectReply ? SETTLE_REPLY_MAX_MS : SETTLE_MAX_MS); expectReply = expecting()) {
    const now = sizes(files);
    const still = files.every((f) => now[f] === read.ends[f]);
    const quiet = Date.now() - t0 >= d.ledger.quietMs && Date.now() - grewAt >= d.ledger.quietMs / 2;
    if (still && (read.reply || (quiet && !expectReply))) break;
    // Claude Code writes its transcript on a 100 ms timer: woken by the write itself (its folder watched), or after
    // SETTLE_POLL_MS (a sub-agent's file, in a folder below).
    await waitForChange(dirname(main), SETTLE_POLL_MS);
    const before = JSON.stringify(read.ends);
    files = transcriptFiles(main);
    read = await readNow(files);
    if (JSON.stringify(read.ends) !== before) grewAt = Date.now();
  }
  const priced = costOfModels(read.turn.model_usage);
  const cost = priced.cost_usd;
  const out: CostFields = {
    usage: publicUsage(read.turn.usage),
    model_usage: Object.fromEntries(Object.entries(read.turn.model_usage).map(([m, u]) => [m, publicUsage(u)])),
    cost_usd: cost,
    cost_complete: priced.cost_complete,
  };
  const recorded = (async () => {
    await d.store.patch(id, (x) => {
      const at = x.usage_files ?? {};
      // Counted already by another server (or by an earlier settlement): its offsets moved since we read them.
      if (Object.keys(counted).some((f) => at[f] !== counted[f])) return;
      const mu = fromRecord(x);
      for (const [model, u] of Object.entries(read.total.model_usage)) addUsage((mu[model] ??= emptyUsage()), u);
      x.usage_by_model = Object.fromEntries(Object.entries(mu).map(([m, u]) => [m, { ...u }]));
      x.usage_files = { ...at, ...read.ends };
    });
    if (d.history) {
      const outcome = fold.last_turn ?? "completed";
      d.history.recordTurn({
        session_id: id,
        claude_session_id: fold.claude_session_id ?? r.claude_session_id,
        prompt: begun?.prompt ?? fold.last_prompt ?? "",
        ...(fold.last_response !== undefined ? { response: fold.last_response } : {}),
        started_at: begun?.startedAt ?? new Date().toISOString(),
        ended_at: new Date(),
        outcome,
        ...(outcome === "failed" && fold.last_error ? { error: fold.last_error } : {}),
        usage: read.turn.usage,
        cost_usd: cost,
        cost_complete: priced.cost_complete,
      });
      d.history.noticeAppend(files);
    }
  })().catch((e: unknown) => d.log.warn(`${id}: recording the turn's usage failed: ${String(e)}`));
  l.recording = recorded;
  void recorded.then(() => {
    if (l.recording === recorded) l.recording = undefined;
  });
  // The ledger as it is now: the next prompt may have begun while this turn was settling (send returns at Stop).
  l.begun = l.begun.filter((b) => b.promptNo > turn);
  return { fields: out, recorded };
}

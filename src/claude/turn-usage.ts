/**
 * The usage of one turn and what is new for a session's totals, read from a conversation's transcript and its
 * sub-agent transcripts (`<session>/subagents/*.jsonl`, newer Claude Code). Byte offsets per file say where the
 * turn began (the sizes when its prompt was delivered) and how far the totals were counted. In the main file the
 * turn runs from its prompt line (the first real prompt at or after where it began) to the next prompt line, so a
 * prompt queued during a turn is not charged that turn's replies. Each API message id counts once.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readFrom } from "../util/files.js";
import { hasTextBlock, isPrompt, mayBe, messageUsageOf, parseTranscriptLine, type MessageUsage } from "./transcript-line.js";
import { UsageAccumulator, type TurnUsage } from "./usage.js";

export type Offsets = Record<string, number>;

/** The conversation's transcript and its sub-agent transcripts that exist now. */
export function transcriptFiles(main: string): string[] {
  const dir = join(dirname(main), basename(main, ".jsonl"), "subagents");
  let subs: string[] = [];
  try {
    subs = readdirSync(dir)
      .filter((n) => n.endsWith(".jsonl"))
      .map((n) => join(dir, n));
  } catch {
    // no sub-agents (yet)
  }
  return [main, ...subs];
}

export function sizes(files: string[]): Offsets {
  const out: Offsets = {};
  for (const f of files) {
    try {
      out[f] = statSync(f).size;
    } catch {
      out[f] = 0;
    }
  }
  return out;
}

export interface TurnRead {
  turn: TurnUsage;
  total: TurnUsage;
  /** Where each file was read to (whole lines). */
  ends: Offsets;
  /** The turn's reply is there: an assistant line with text after its prompt. */
  reply: boolean;
}

/**
 * Reads `files`: lines at or after `turnFrom[f]` (0 for a file not in it) count for the turn, lines at or after
 * `counted[f]` for the totals.
 */
export async function readTurn(main: string, files: string[], turnFrom: Offsets, counted: Offsets): Promise<TurnRead> {
  const turn = new UsageAccumulator();
  const total = new UsageAccumulator();
  const ends: Offsets = {};
  let reply = false;
  for (const f of files) {
    const tFrom = turnFrom[f] ?? 0;
    const cFrom = counted[f] ?? 0;
    let offset = Math.min(tFrom, cFrom);
    // Main file: the turn starts at its prompt line and ends at the next one.
    let state: "before" | "in" | "after" = f === main ? "before" : "in";
    const before: { mu: MessageUsage; text: boolean }[] = [];
    for (;;) {
      const { text, end } = await readFrom(f, offset, { upTo: "line" });
      if (end === offset) break;
      let at = offset;
      for (const line of text.split("\n")) {
        const start = at;
        at += Buffer.byteLength(line) + 1;
        if (!line) continue;
        const maybePrompt = f === main && start >= tFrom && state !== "after" && mayBe(line, "user");
        if (!maybePrompt && !mayBe(line, "assistant")) continue;
        const l = parseTranscriptLine(line);
        if (!l) continue;
        if (maybePrompt && isPrompt(l)) {
          state = state === "before" ? "in" : "after";
          continue;
        }
        const mu = messageUsageOf(l);
        if (!mu) continue;
        if (start >= tFrom && state === "in") {
          turn.add(mu);
          if (f === main && !mu.sidechain) reply = hasTextBlock(l);
        } else if (start >= tFrom && state === "before") {
          before.push({ mu, text: hasTextBlock(l) });
        }
        if (start >= cFrom) total.add(mu);
      }
      offset = end;
    }
    // A main file without a prompt line after where the turn began (bash mode, an older layout) counts from there.
    if (state === "before") {
      for (const b of before) {
        turn.add(b.mu);
        if (!b.mu.sidechain) reply = b.text;
      }
    }
    ends[f] = offset;
  }
  return { turn: turn.result(), total: total.result(), ends, reply };
}

/**
 * A fork's transcript starts with the history Claude copied from its parent; those lines keep their timestamps, and
 * everything the fork writes itself is stamped after it started (`before`). The copied history ends after the last
 * line stamped before `before` (headless forks write a few bookkeeping lines of their own above the copy).
 */
export async function copiedHistoryEnd(file: string, before: string): Promise<number> {
  const limit = Date.parse(before);
  if (Number.isNaN(limit)) return 0;
  let offset = 0;
  let copied = 0;
  for (;;) {
    const { text, end } = await readFrom(file, offset, { upTo: "line" });
    if (end === offset) return copied;
    let at = offset;
    for (const line of text.split("\n")) {
      at += Buffer.byteLength(line) + 1;
      if (!line) continue;
      const m = /"timestamp":"([^"]+)"/.exec(line);
      const t = m ? Date.parse(m[1]!) : NaN;
      if (!Number.isNaN(t) && t < limit) copied = Math.min(at, end);
    }
    offset = end;
  }
}

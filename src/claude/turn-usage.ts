/**
 * The usage of one turn and what is new for a session's totals, read from a conversation's transcript and its
 * sub-agent transcripts (`<session>/subagents/*.jsonl`, newer Claude Code). Byte offsets per file say where the
 * turn began (the sizes when its prompt was delivered) and how far the totals were counted. In the main file the
 * turn's prompt is the first real prompt at or after where it began, and its lines are those whose `parentUuid`
 * chain leads back to that prompt (by position, up to the next prompt line, when the chain says nothing), so a
 * prompt queued during a turn is not charged that turn's replies, even one written after it. Each API message id
 * counts once.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readFrom } from "../util/fs/files.js";
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

/** A main-file line of the conversation chain: its parent and whether it is a prompt. */
interface Node {
  parent: string | undefined;
  prompt: boolean;
}

/** A main-file prompt line and a main-file assistant line at or after where the turn began, attributed once read. */
interface PromptAt {
  uuid: string | undefined;
  promptId: string | undefined;
  start: number;
}
interface Candidate {
  mu: MessageUsage;
  text: boolean;
  parent: string | undefined;
  start: number;
}

/**
 * The prompt a line answers, following `parentUuid` back through the lines read: its uuid; `null` when the chain
 * leaves the lines read (it starts before them: an earlier turn); undefined when the chain cannot say (no uuids,
 * a root that is not a prompt, such as an older sub-agent's chain in the main file).
 */
function promptOf(nodes: Map<string, Node>, parent: string | undefined): string | null | undefined {
  for (let p = parent, steps = 0; p !== undefined && steps <= nodes.size; steps++) {
    const n = nodes.get(p);
    if (!n) return null;
    if (n.prompt) return p;
    p = n.parent;
  }
  return undefined;
}

/**
 * Reads `files`: lines at or after `turnFrom[f]` (0 for a file not in it) count for the turn, lines at or after
 * `counted[f]` for the totals. In the main file the turn's prompt line is the one carrying `promptId` (the turn's
 * UserPromptSubmit prompt_id) when prompt lines carry ids, else the first prompt line at or after where the turn
 * began; an assistant line belongs to the turn whose prompt its `parentUuid` chain leads back to. Positions are not
 * enough: a prompt queued during a turn may be delivered before the turn's own prompt line is written, and Claude
 * Code writes a turn's last reply line after its Stop hook, when a queued prompt may already have started. Lines
 * whose chain says nothing go by position: from the turn's prompt line to the next one.
 */
export async function readTurn(
  main: string,
  files: string[],
  turnFrom: Offsets,
  counted: Offsets,
  promptId?: string,
): Promise<TurnRead> {
  const turn = new UsageAccumulator();
  const total = new UsageAccumulator();
  const ends: Offsets = {};
  let reply = false;
  for (const f of files) {
    const isMain = f === main;
    const tFrom = turnFrom[f] ?? 0;
    const cFrom = counted[f] ?? 0;
    let offset = Math.min(tFrom, cFrom);
    const nodes = new Map<string, Node>();
    const prompts: PromptAt[] = [];
    const candidates: Candidate[] = [];
    for (;;) {
      const { text, end } = await readFrom(f, offset, { upTo: "line" });
      if (end === offset) break;
      let at = offset;
      for (const line of text.split("\n")) {
        const start = at;
        at += Buffer.byteLength(line) + 1;
        if (!line) continue;
        // The main file's chain needs every line's uuid; elsewhere only assistant lines matter.
        if (!(isMain && (line.includes('"parentUuid"') || mayBe(line, "user"))) && !mayBe(line, "assistant")) continue;
        const l = parseTranscriptLine(line);
        if (!l) continue;
        const prompt = isMain && isPrompt(l);
        if (isMain && l.uuid) nodes.set(l.uuid, { parent: l.parentUuid, prompt });
        if (prompt) {
          prompts.push({ uuid: l.uuid, promptId: l.promptId, start });
          continue;
        }
        const mu = messageUsageOf(l);
        if (!mu) continue;
        if (start >= cFrom) total.add(mu);
        if (start < tFrom) continue;
        if (isMain) candidates.push({ mu, text: hasTextBlock(l), parent: l.parentUuid, start });
        else turn.add(mu);
      }
      offset = end;
    }
    if (isMain) {
      // With ids on prompt lines, only the line with the turn's id is its prompt (none yet: not written yet).
      const byId = promptId !== undefined && prompts.some((p) => p.promptId !== undefined);
      const i = byId ? prompts.findIndex((p) => p.promptId === promptId) : prompts.findIndex((p) => p.start >= tFrom);
      const own = prompts[i];
      const next = prompts[i + 1]?.start ?? Infinity;
      for (const c of candidates) {
        const owner = promptOf(nodes, c.parent);
        // A chain that says nothing goes by position; without a prompt line for the turn (an older layout without
        // ids), everything after where the turn began counts.
        const mine =
          owner !== undefined ? own !== undefined && owner === own.uuid : own ? c.start > own.start && c.start < next : !byId;
        if (!mine) continue;
        turn.add(c.mu);
        if (!c.mu.sidechain) reply = c.text;
      }
    }
    ends[f] = offset;
  }
  return { turn: turn.result(), total: total.result(), ends, reply };
}

/** The API message ids of a transcript's assistant lines (empty when it cannot be read). */
async function messageIds(file: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let offset = 0;
  for (;;) {
    const { text, end } = await readFrom(file, offset, { upTo: "line" }).catch(() => ({ text: "", end: offset }));
    if (end === offset) return ids;
    for (const line of text.split("\n")) {
      if (!line || !mayBe(line, "assistant")) continue;
      const mu = messageUsageOf(parseTranscriptLine(line));
      if (mu) ids.add(mu.message_id);
    }
    offset = end;
  }
}

/**
 * A fork's transcript starts with the history Claude copied from its parent; those lines keep their timestamps, and
 * everything the fork writes itself is stamped after it started (`before`). The copied history ends after the last
 * line stamped before `before` (headless forks write a few bookkeeping lines of their own above the copy), or after
 * the last assistant line whose API message is the parent's (`parentFile`): on a loaded machine the parent's last
 * reply can be written, and stamped, after the fork was asked for, and the fork still copies it.
 */
export async function copiedHistoryEnd(file: string, before: string, parentFile?: string): Promise<number> {
  const limit = Date.parse(before);
  const parentIds = parentFile ? await messageIds(parentFile) : new Set<string>();
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
      if (!Number.isNaN(limit) && !Number.isNaN(t) && t < limit) copied = Math.min(at, end);
      else if (parentIds.size && mayBe(line, "assistant")) {
        const mu = messageUsageOf(parseTranscriptLine(line));
        if (mu && parentIds.has(mu.message_id)) copied = Math.min(at, end);
      }
    }
    offset = end;
  }
}

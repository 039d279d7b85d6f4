/**
 * stream_output: the screen (through the driver), the raw terminal log, or Claude's transcript, each from a
 * cursor so a caller reads only what is new; `follow` waits for the file to change (fs.watch, no polling).
 */
import { stripVTControlCharacters } from "node:util";
import type { Resolved, StreamInput, StreamOutput, TranscriptItem } from "../api/index.js";
import { readTranscript, transcriptPath } from "../claude/transcript.js";
import { configDirFor } from "../claude/accounts.js";
import type { CallContext } from "../core/context.js";
import { SessionError } from "../core/errors.js";
import { isLive } from "../core/status.js";
import type { Folded } from "../events/reducer.js";
import type { SessionRecord } from "../store/schema.js";
import { waitForChange } from "../util/fs/file-change.js";
import { readFrom, readTail } from "../util/fs/files.js";
import { isSameFile } from "../util/fs/owned.js";
import { runnerOf, type Deps } from "./deps.js";

export async function stream(d: Deps, input: Resolved<StreamInput>, ctx: CallContext): Promise<StreamOutput> {
  const r = await d.registry.record(input.session_id);
  if (input.mode === "screen") {
    const s = await d.registry.handle(r.session_id);
    if (!isLive(s.live.fold.status))
      throw new SessionError("SESSION_DEAD", `session ${r.session_id} is ${s.live.fold.status}; there is no screen.`, {
        suggestion: "Use mode log or transcript to read what it did.",
      });
    let text = await runnerOf(d, r.backend).driver.screen(s);
    if (input.lines) text = text.split("\n").slice(-input.lines).join("\n");
    return { session_id: r.session_id, mode: "screen", text, status: s.live.fold.status };
  }
  const file = input.mode === "log" ? await rawLog(d, r) : transcriptFile(d, r, d.registry.followed(r.session_id)?.fold);
  const cursor = parseCursor(input.cursor);
  const read = async (): Promise<{ text?: string; items?: TranscriptItem[]; cursor: number; fresh: boolean }> => {
    if (input.mode === "log") {
      if (cursor === undefined) {
        const { text, end } = await readTail(file, Math.max(64 * 1024, (input.lines ?? 100) * 400));
        const clean = cleanLog(text)
          .split("\n")
          .slice(-(input.lines ?? 100))
          .join("\n");
        return { text: clean, cursor: end, fresh: true };
      }
      let r = await readFrom(file, cursor);
      // Shorter than the cursor: the log was rotated (capture.ts); what is there now is all new.
      if (r.size < cursor) r = await readFrom(file, 0);
      return { text: cleanLog(r.text), cursor: r.end, fresh: r.text.length > 0 };
    }
    const { items, cursor: next } = await readTranscript(file, cursor ?? 0);
    const shown = cursor === undefined && input.lines ? items.slice(-input.lines) : items;
    return { items: shown, cursor: next, fresh: items.length > 0 };
  };
  let res = await read();
  if (!res.fresh && input.follow) {
    await waitForChange(file, input.timeout_ms ?? 30_000, ctx.signal);
    res = await read();
  }
  const out: StreamOutput = { session_id: r.session_id, mode: input.mode, cursor: String(res.cursor) };
  if (res.text !== undefined) out.text = res.text;
  if (res.items !== undefined) out.items = res.items;
  return out;
}

/** The raw output file of a session; refused when its log_file was replaced by another file since it was made. */
async function rawLog(d: Deps, r: SessionRecord): Promise<string> {
  if (r.log_file && r.log_file_id && !(await isSameFile(r.log_file, r.log_file_id))) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the log_file of session ${r.session_id} was replaced by another file; it is not read.`,
      { suggestion: "Use mode transcript or screen." },
    );
  }
  return d.registry.paths(r.session_id).rawLogPath;
}

function transcriptFile(d: Deps, r: SessionRecord, f: Folded | undefined): string {
  return (
    f?.transcript_path ??
    transcriptPath(configDirFor(d.cfg.accountsFile, d.cfg.claudeConfigDir, r.account), r.cwd, r.claude_session_id)
  );
}

function parseCursor(c: string | undefined): number | undefined {
  if (c === undefined || c === "") return undefined;
  const n = Number(c);
  if (!Number.isInteger(n) || n < 0)
    throw new SessionError("INVALID_ARGUMENT", `cursor ${JSON.stringify(c)} is not a cursor returned by stream_output.`);
  return n;
}

function cleanLog(text: string): string {
  return stripVTControlCharacters(text).replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

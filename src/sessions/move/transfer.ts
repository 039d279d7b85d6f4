/**
 * The node's side of a move (move_session, issue 36): a coordinator carries a hibernated session from one machine to
 * another in steps, each one call of transfer_session here. export (source: hibernates an idle session, returns its
 * record, fold and transcript) → import (target: the copy, hibernated and marked incoming, hidden from listings) →
 * release (source: removes it, only if nothing happened to it since export) → commit (target: the mark goes).
 * abort removes an incoming copy; state says what this machine has, so a coordinator killed mid-move resolves it
 * (src/nodes/move.ts). Every step checks what it is given: no path or command comes from the caller (the transcript's
 * place is made from the cwd and the UUID), and a record keeps only the fields that mean something on another machine.
 */
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { MoveBundle, TransferInput, TransferOutput } from "../../api/index.js";
import { transcriptPath } from "../../claude/transcript.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import { isFold } from "../../events/parse.js";
import type { LiveSession } from "../../events/live.js";
import type { Folded } from "../../events/reducer.js";
import { SessionRecordSchema, type SessionRecord } from "../../store/schema.js";
import type { Deps } from "../deps.js";
import { canHibernate, hibernate } from "../life/sleep.js";
import { withSessionKeys } from "../turn/keys.js";

/** A transcript larger than this is not carried (one MCP message holds it). */
export const MOVE_MAX_BYTES = 48 * 1024 * 1024;

/** Record fields that mean the same on another machine; the rest (pids, terminals, paths of this one) are not carried. */
const KEPT = [
  "created_at",
  "started_at",
  "last_active",
  "generation",
  "command",
  "args",
  "doppler_project",
  "doppler_config",
  "env_names",
  "team_name",
  "teammate_name",
  "model",
  "permission_mode",
  "sandbox",
  "claude_version",
  "max_turns",
  "max_budget_usd",
  "usage_by_model",
  "turn_count",
  "last_message",
  "last_response",
  "last_error",
  "error_log",
  "messages_sent",
  "responses_received",
  "total_chars_sent",
  "total_chars_received",
  "forked_from",
  "options",
] as const;

/** Fold fields of a process or of this machine: a moved session has neither. */
const FOLD_DROPPED = [
  "transcript_path",
  "pending_permission",
  "blocked",
  "needs_input",
  "permission_denials",
  "exit_code",
  "shutdown_requested",
] as const satisfies ReadonlyArray<keyof Folded>;

export async function transfer(d: Deps, a: TransferInput): Promise<TransferOutput> {
  const id = a.session_id;
  switch (a.op) {
    case "export":
      return { session_id: id, op: a.op, bundle: await exportSession(d, id) };
    case "import":
      if (!a.bundle)
        throw new SessionError("INVALID_ARGUMENT", "import needs bundle.", { suggestion: "Pass what export returned." });
      await importSession(d, id, a.move_id, a.bundle);
      return { session_id: id, op: a.op };
    case "release":
      if (a.seq === undefined)
        throw new SessionError("INVALID_ARGUMENT", "release needs seq.", { suggestion: "Pass the bundle's seq." });
      await release(d, id, a.seq);
      return { session_id: id, op: a.op };
    case "commit":
      await commit(d, id, a.move_id);
      return { session_id: id, op: a.op };
    case "abort":
      await abort(d, id, a.move_id);
      return { session_id: id, op: a.op };
    case "state": {
      const r = await d.store.get(id);
      return { session_id: id, op: a.op, present: r !== undefined, ...(r?.incoming ? { incoming: r.incoming.move_id } : {}) };
    }
  }
}

function notFound(id: string): SessionError {
  return new SessionError("SESSION_NOT_FOUND", `session ${id} is not on this machine.`, {
    suggestion: "list_sessions shows where each session is.",
  });
}

/** How long no event must land after a move's hibernation before its event count is taken, and the longest wait. */
const ENDED_QUIET_MS = 400;
const ENDED_WAIT_MS = 5000;

/** Waits until no event has landed for `quietMs` (at most `maxMs`). */
async function quiet(s: LiveSession, quietMs: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  for (;;) {
    const seq = s.fold.seq;
    const left = until - Date.now();
    if (left <= 0) return;
    const changed = await s.waitFor((f) => f.seq !== seq, { timeoutMs: Math.min(quietMs, left) });
    if (!changed) return;
  }
}

/** The session hibernated (an idle one is hibernated now) and what a move carries of it. */
async function exportSession(d: Deps, id: string): Promise<MoveBundle> {
  const r = await d.store.get(id);
  if (!r || r.incoming || r.spare !== undefined) throw notFound(id);
  if (r.worktree) {
    throw new SessionError(
      "UNSUPPORTED_OPTION",
      `session ${id} runs in a git worktree this server made (${r.worktree.path}); a move does not carry worktrees.`,
      {
        suggestion:
          "Its worktree holds its work and stays on this machine: commit and push the branch, then start a session on the " +
          "other node with that branch; or keep the session here.",
      },
    );
  }
  const s = await d.registry.follow(id);
  await s.refresh();
  if (s.fold.status !== "hibernated") {
    if (!canHibernate(s.fold)) {
      const st = s.fold.status;
      if (isLive(st))
        throw new SessionError("SESSION_BUSY", `session ${id} is ${st}; only an idle or hibernated session is moved.`, {
          suggestion: "Wait for its turn to end (wait_for_completion), then move it.",
        });
      throw new SessionError("SESSION_DEAD", `session ${id} has ended (${st}); only an idle or hibernated session is moved.`, {
        suggestion: "resume_session it first, or resume its conversation on the other node.",
      });
    }
    if (!(await hibernate(d, id, "move_session"))) {
      throw new SessionError("SESSION_BUSY", `session ${id} could not be hibernated for the move (it is ${s.fold.status} now).`, {
        suggestion: "Wait for its turn to end, then move it.",
      });
    }
    // The ended process's last lines (tmux's pane-died cs:exit runs in the background) change nothing of a hibernated
    // session but its event count, which release compares: the bundle's count is taken once they have landed.
    await quiet(s, ENDED_QUIET_MS, ENDED_WAIT_MS);
  }
  await d.registry.flushed();
  await s.refresh();
  const rec = (await d.store.get(id))!;
  const csid = s.fold.claude_session_id ?? rec.claude_session_id;
  const path = transcriptPath(d.cfg.claudeConfigDir, rec.cwd, csid);
  const size = await stat(path).then(
    (x) => x.size,
    () => 0,
  );
  if (size > MOVE_MAX_BYTES) {
    throw new SessionError(
      "UNSUPPORTED_OPTION",
      `session ${id}'s transcript is ${size} bytes, more than a move carries (${MOVE_MAX_BYTES}).`,
      { suggestion: "compact_session it first (it then has a short transcript), or keep it here." },
    );
  }
  const transcript = size ? await readFile(path, "utf8") : "";
  return {
    record: rec,
    fold: { ...s.fold },
    claude_session_id: csid,
    cwd: rec.cwd,
    transcript,
    seq: s.fold.seq,
  };
}

/** The record a moved session has here: the kept fields, hibernated, marked incoming. */
function importedRecord(d: Deps, id: string, moveId: string, b: MoveBundle, wrote: boolean): SessionRecord {
  const src = b.record;
  const kept: Record<string, unknown> = {};
  for (const k of KEPT) if (src[k] !== undefined) kept[k] = src[k];
  const backend =
    typeof src.backend === "string" && d.runners[src.backend as keyof typeof d.runners] ? src.backend : d.defaultKind;
  const parsed = SessionRecordSchema.safeParse({
    ...kept,
    session_id: id,
    claude_session_id: b.claude_session_id,
    backend,
    status: "hibernated",
    cwd: b.cwd,
    created_at: typeof src.created_at === "string" ? src.created_at : new Date().toISOString(),
    // Usage was counted up to here on the other machine: this transcript is counted from its end on.
    ...(src.usage_by_model !== undefined
      ? { usage_files: { [transcriptPath(d.cfg.claudeConfigDir, b.cwd, b.claude_session_id)]: Buffer.byteLength(b.transcript) } }
      : {}),
    incoming: { move_id: moveId, wrote_transcript: wrote },
  });
  if (!parsed.success)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the moved session's record is not valid here: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
      { suggestion: "Both machines should run the same version of claude-sessions (claude-sessions nodes)." },
    );
  return parsed.data;
}

async function importSession(d: Deps, id: string, moveId: string, b: MoveBundle): Promise<void> {
  const have = await d.store.get(id);
  if (have) {
    if (have.incoming?.move_id === moveId) return; // the same import again
    throw new SessionError("ALREADY_EXISTS", `a session ${id} is already on this machine.`, {
      suggestion: "Kill or move that one first.",
    });
  }
  const fold = b.fold;
  if (!isFold(fold)) {
    throw new SessionError("INVALID_ARGUMENT", "the moved session's fold is not valid.", {
      suggestion: "Both machines should run the same version of claude-sessions.",
    });
  }
  if (
    !(await stat(b.cwd).then(
      (x) => x.isDirectory(),
      () => false,
    ))
  ) {
    throw new SessionError("INVALID_ARGUMENT", `the session's directory ${b.cwd} does not exist on this machine.`, {
      suggestion: "Make the same directory there (e.g. the repository cloned at the same path), then move it again.",
    });
  }
  const path = transcriptPath(d.cfg.claudeConfigDir, b.cwd, b.claude_session_id);
  let wrote = false;
  if (b.transcript) {
    const old = await readFile(path, "utf8").catch(() => undefined);
    if (old !== undefined && old !== b.transcript) {
      throw new SessionError("ALREADY_EXISTS", `this machine already has a different conversation ${b.claude_session_id}.`, {
        suggestion: "That conversation is this machine's own; resume it here instead of moving.",
      });
    }
    wrote = old === undefined;
  }
  const rec = importedRecord(d, id, moveId, b, wrote);
  const dir = d.registry.paths(id).dir;
  const clean: Folded = { ...fold, status: "hibernated", claude_session_id: b.claude_session_id };
  for (const k of FOLD_DROPPED) delete clean[k];
  let added = false;
  try {
    // Under the state's lock, as abort's mark is written: an import arriving after its move was aborted (a request
    // a killed coordinator sent, read late) is refused instead of leaving a copy nobody will resolve.
    const why = await d.store.update(async (st) => {
      if (Object.hasOwn(st.sessions, id)) return "exists";
      if (
        await stat(abortedMark(d, moveId)).then(
          () => true,
          () => false,
        )
      )
        return "aborted";
      st.sessions[id] = rec;
      added = true;
      return undefined;
    });
    if (why === "aborted")
      throw new SessionError("INVALID_ARGUMENT", `move ${moveId} was given up; its copy is not made.`, {
        suggestion: "Move the session again.",
      });
    if (why)
      throw new SessionError("ALREADY_EXISTS", `a session ${id} is already on this machine.`, {
        suggestion: "Kill or move that one first.",
      });
    // No old events of an earlier session of this id (the record is ours now): its one event is the moved fold.
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // The transcript only once the record that names it is there: a server ended in between leaves a record abort
    // removes, never a file no record names.
    if (wrote) {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFile(path, b.transcript, { flag: "wx", mode: 0o600 });
    }
    await d.registry.emit(id, { hook_event_name: "cs:snapshot", fold: clean });
    await d.registry.flushed();
  } catch (e) {
    // Nothing of a failed import stays: not the record, not the transcript it wrote.
    if (added) await removeHere(d, rec, false).catch(() => {});
    if (wrote) await rm(path, { force: true }).catch(() => {});
    throw e;
  }
}

/** Removes the session here: its record, its directory, its transcript (the conversation lives on the other machine now). */
async function removeHere(d: Deps, r: SessionRecord, transcript: boolean): Promise<void> {
  const id = r.session_id;
  const csid = d.registry.followed(id)?.fold.claude_session_id ?? r.claude_session_id;
  await d.store.update((st) => void delete st.sessions[id]);
  d.registry.drop(id);
  await rm(d.registry.paths(id).dir, { recursive: true, force: true });
  if (transcript) await rm(transcriptPath(d.cfg.claudeConfigDir, r.cwd, csid), { force: true });
}

async function release(d: Deps, id: string, seq: number): Promise<void> {
  const r = await d.store.get(id);
  if (!r) return; // released already
  if (r.incoming) throw notFound(id);
  const s = await d.registry.follow(id);
  // Under the send lock: a prompt waking it waits, then finds no session.
  const ok = await withSessionKeys(d, id, 30_000, {}, async () => {
    await s.refresh();
    return s.fold.status === "hibernated" && s.fold.seq === seq;
  });
  if (!ok)
    throw new SessionError(
      "SESSION_BUSY",
      `session ${id} changed while it was being moved (it is ${s.fold.status}); it stays here.`,
      { suggestion: "Move it again once it is idle." },
    );
  await removeHere(d, r, true);
  d.log.info(`${id}: moved away`);
}

async function commit(d: Deps, id: string, moveId: string): Promise<void> {
  const r = await d.store.get(id);
  if (!r) throw notFound(id);
  if (!r.incoming) return; // committed already
  if (r.incoming.move_id !== moveId)
    throw new SessionError("INVALID_ARGUMENT", `session ${id} is the copy of another move.`, {
      suggestion: "Commit it with its own move id.",
    });
  await d.store.patch(id, (rec) => void delete rec.incoming);
  d.log.info(`${id}: moved here (${moveId})`);
}

/** The mark of a move given up on this machine (abort found no copy yet): a later import of it is refused. */
function abortedMark(d: Deps, moveId: string): string {
  return join(d.cfg.stateDir, "moves-aborted", moveId);
}

async function abort(d: Deps, id: string, moveId: string): Promise<void> {
  const r = await d.store.get(id);
  if (!r) {
    const mark = abortedMark(d, moveId);
    await mkdir(dirname(mark), { recursive: true, mode: 0o700 });
    // Written under the state's lock: an import either landed before it (and is removed by the next abort) or is refused after it.
    const landed = await d.store.update(async (st) => {
      if (Object.hasOwn(st.sessions, id)) return true;
      await writeFile(mark, "", { mode: 0o600 });
      return false;
    });
    if (landed) return abort(d, id, moveId);
    return;
  }
  if (r.incoming?.move_id !== moveId)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `session ${id} here is not the incoming copy of move ${moveId}; it is left alone.`,
      { suggestion: "Only an uncommitted copy is aborted." },
    );
  await removeHere(d, r, r.incoming.wrote_transcript);
}

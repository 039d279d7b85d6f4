/**
 * reset_session and compact_session: /clear and /compact in a live, idle session, given by the server itself (the
 * driver types or sends the fixed command; compact's instructions are checked as prompt text, one line). The
 * session keeps its id, team, worktree, cwd and options; after a reset its record follows the new conversation
 * (usage and transcripts are read by `claude_session_id`), and the old one stays resumable by its id.
 */
import type { CompactInput, CompactOutput, ResetInput, ResetOutput, Resolved } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { acceptsPrompt } from "../../core/status.js";
import type { SessionCommand } from "../../runners/driver.js";
import { checkPrompt, checkUsable } from "../checks.js";
import { settled } from "../spend/cost.js";
import { runnerOf, type Deps } from "../deps.js";
import { wakeIfHibernated } from "../launch/wake.js";
import { withSessionKeys } from "./keys.js";

/** /clear is quick; /compact asks the model for a summary of the whole conversation. */
const CLEAR_MS = 30_000;
const COMPACT_MS = 300_000;

export async function reset(d: Deps, input: Resolved<ResetInput>, ctx: CallContext): Promise<ResetOutput> {
  const { old, now, status } = await runCommand(d, input.session_id, { kind: "clear" }, CLEAR_MS, ctx);
  if (now === old) {
    throw new SessionError(
      "PROCESS_ERROR",
      `session ${input.session_id}: Claude Code cleared the conversation but reported no new session id.`,
      {
        suggestion: "list_sessions shows the session; kill_session and start_session give a fresh one for sure.",
      },
    );
  }
  await d.store.patch(input.session_id, (r) => {
    r.claude_session_id = now;
  });
  return { session_id: input.session_id, claude_session_id: now, old_claude_session_id: old, status };
}

export async function compact(d: Deps, input: Resolved<CompactInput>, ctx: CallContext): Promise<CompactOutput> {
  let instructions: string | undefined;
  if (input.instructions !== undefined && input.instructions.trim()) {
    instructions = checkPrompt(d.cfg, input.instructions, "instructions").trim();
    if (/[\n\r\t]/.test(instructions))
      throw new SessionError("INVALID_ARGUMENT", "instructions must be one line of text (no newline or tab).");
  }
  const { now, status } = await runCommand(
    d,
    input.session_id,
    { kind: "compact", ...(instructions ? { instructions } : {}) },
    COMPACT_MS,
    ctx,
  );
  return { session_id: input.session_id, claude_session_id: now, status, compacted_at: new Date().toISOString() };
}

function busy(id: string, status: string): SessionError {
  return new SessionError("SESSION_BUSY", `session ${id} is ${status}: a reset or compaction needs it idle.`, {
    suggestion: "Wait for the turn with wait_for_completion (answer a pending permission or screen first), then call again.",
  });
}

async function runCommand(
  d: Deps,
  id: string,
  cmd: SessionCommand,
  timeoutMs: number,
  ctx: CallContext,
): Promise<{ old: string; now: string; status: ResetOutput["status"] }> {
  const r = await d.registry.record(id);
  const s = await d.registry.handle(id);
  // A hibernated session has no process: it is woken first (as a prompt would wake it).
  if (s.live.fold.status === "hibernated") await wakeIfHibernated(d, id, ctx);
  checkUsable(r, s.live.fold.status);
  if (!acceptsPrompt(s.live.fold.status)) throw busy(id, s.live.fold.status);
  const { driver } = runnerOf(d, r.backend);
  // The last turn's usage is read from the old transcript before the conversation changes.
  await settled(d, id);
  return withSessionKeys(d, id, timeoutMs, ctx, async () => {
    // Decided again under the lock: another caller may just have sent a prompt.
    await s.live.refresh();
    const status = s.live.fold.status;
    checkUsable(r, status);
    if (!acceptsPrompt(status)) throw busy(id, status);
    const old = s.live.fold.claude_session_id ?? r.claude_session_id;
    await driver.command(s, cmd, timeoutMs, ctx);
    await d.registry.flushed();
    return { old, now: s.live.fold.claude_session_id ?? old, status: s.live.fold.status };
  });
}

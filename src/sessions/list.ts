/**
 * list_sessions: a pure read. The stored records, overlaid with the newer folds this process follows and with one
 * liveness call per backend; a record whose terminal is gone is shown dead and handed to the reconciler, which
 * records it in the background.
 */
import type { ListInput, ListOutput } from "../api/index.js";
import { SessionError } from "../core/errors.js";
import { isLive, statusGroup } from "../core/status.js";
import type { SessionRecord } from "../store/schema.js";
import { survivingLiveness, type Reconciler } from "./launch/adopt.js";
import { recordings } from "./spend/cost.js";
import type { Deps } from "./deps.js";
import { applyFold, summary } from "./views.js";
import { metricsOf } from "./spend/metrics.js";
import { nativeSessions } from "./native.js";
import { isDirty } from "./launch/worktree.js";

export async function list(
  d: Deps,
  reconciler: Reconciler,
  input: ListInput,
  overlapsOf: (id: string) => Array<{ session_id: string; file: string }> = () => [],
): Promise<ListOutput> {
  if (input.include_sensitive && !d.cfg.allowSensitive) {
    throw new SessionError(
      "PERMISSION_DENIED",
      "include_sensitive needs the operator's permission (the server's CLAUDE_SESSIONS_ALLOW_SENSITIVE=1).",
      {
        suggestion: "Leave include_sensitive out: argv, system prompts and environment names are omitted by default.",
      },
    );
  }
  // Turns whose figures are read and on their way into the store: their totals are part of this answer.
  const recording = recordings(d);
  if (recording.length) await Promise.all(recording);
  const state = await d.store.read();
  const records = Object.values(state.sessions);
  // include_native: the CLI's own list, asked for beside the reads below (one `claude agents --json` run).
  const native = input.include_native ? nativeSessions(d, records) : undefined;
  const live = await survivingLiveness(d, records);
  // Sessions in worktrees the server made: whether each has uncommitted changes (one git status each, in parallel).
  const dirty = new Map(
    await Promise.all(
      records.filter((r) => r.worktree).map(async (r) => [r.session_id, await isDirty(r.worktree!.path)] as const),
    ),
  );
  // include_metadata: each session's turn metrics, from the execution history in one read.
  const metrics = input.include_metadata ? d.history?.metrics() : undefined;
  const out: ListOutput["sessions"] = [];
  const vanished: string[] = [];
  let filtered = 0;
  for (const r0 of [...records].sort((a, b) => a.created_at.localeCompare(b.created_at))) {
    // A move's copy not yet committed is no one's session yet (move/transfer.ts).
    if (r0.incoming) continue;
    let r: SessionRecord = r0;
    const followed = d.registry.followed(r.session_id);
    if (followed) {
      // What this process has folded may be newer than the file (writes are coalesced).
      r = structuredClone(r);
      applyFold(r, followed.fold);
    }
    const terminals = live.get(r.backend);
    const l = terminals?.get(r.session_id);
    if (terminals && isLive(r.status) && !l?.exists && r.status !== "starting") {
      vanished.push(r.session_id);
      r = { ...r, status: "dead" };
    }
    // Claude said it ended (SessionEnd) but something in its terminal still runs: a zombie, for kill_session.
    // (With an exit status recorded, the program is gone: the launcher is only finishing its last line.)
    // (Nor while kill_session is ending it: the end folded is the kill's.)
    if (r.status === "dead" && l?.alive && r.exit_code === undefined && !d.registry.session(r.session_id)?.killing)
      r = { ...r, status: "zombie" };
    if (input.status_filter && input.status_filter !== "all" && statusGroup(r.status) !== input.status_filter) continue;
    if (input.team_filter && r.team_name !== input.team_filter) continue;
    filtered += 1;
    if (input.limit !== undefined && out.length >= input.limit) continue;
    const b = d.runners[r.backend]?.host;
    const survives = b?.survivesRestart ?? false;
    const overlaps = isLive(r.status) ? overlapsOf(r.session_id) : [];
    out.push({
      ...(input.include_metadata
        ? {
            ...redactRecord(r, input.include_sensitive === true),
            survives_restart: survives,
            metrics: metricsOf(r, metrics?.get(r.session_id)),
          }
        : summary(r, {
            survivesRestart: survives,
            attachCommand: b?.attachCommand?.(r.session_id),
            dirty: dirty.get(r.session_id),
          })),
      ...(overlaps.length ? { overlaps } : {}),
    });
  }
  if (vanished.length) reconciler.notice(vanished);
  return { sessions: out, total_count: records.length, filtered_count: filtered, ...(native ? await native : {}) };
}

/** A stored record without argv (which holds an appended system prompt) and environment names, unless `sensitive`. */
export function redactRecord(
  r: SessionRecord,
  sensitive: boolean,
): Omit<SessionRecord, "command" | "args" | "env_names" | "options"> & { options: Record<string, unknown> } & Partial<
    Pick<SessionRecord, "command" | "args" | "env_names">
  > {
  if (sensitive) return r;
  const { command: _c, args: _a, env_names: _e, ...rest } = r;
  // The system prompts a caller gave (its sub-agents' too) are the caller's text, as sensitive as argv: only with include_sensitive.
  const { append_system_prompt: _p, system_prompt: _s, agents, ...options } = r.options;
  const shown = agents ? { agents: Object.fromEntries(Object.entries(agents).map(([n, { prompt: _a, ...a }]) => [n, a])) } : {};
  return { ...rest, options: { ...options, ...shown } };
}
